"""What kind of system this is and what its CPUs offer.

``role`` decides bare metal, KVM guest, KVM host or container (the papers advise each
differently); ``guests`` reads a KVM host's libvirt guests; ``cpu_features`` SMT and turbo;
``cpuidle`` C-state limits and latency requests; ``numa`` the NUMA nodes the kernel sees.
"""
