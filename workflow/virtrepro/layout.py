"""Where things live on a testbed host (a leaf module: imports nothing of the package).

``SCRATCH_DIR``: where runs keep their files. Container instances get this very directory of the
host bind-mounted at the same path, so that every platform but the VMs (whose virtual disk is the
layer measured) writes to one file system (docs/methodology.md, "Fair conditions").
"""

SCRATCH_DIR = "/var/tmp/virtrepro"
