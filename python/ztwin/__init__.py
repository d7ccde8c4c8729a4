"""ztwin: a performance digital twin of ZFS under database workloads."""
