"""The SCAP compiler: rules -> OVAL 5.11 + XCCDF 1.2 + CPE in a SCAP 1.3 source data stream."""
