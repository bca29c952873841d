# The guest image every container and VM platform starts from, built offline
# from Debian's archive; its directory is named by the hash of its recipe, so it
# is rebuilt exactly when the recipe (workflow/virtrepro/guests/image.py, with the
# packages the benchmarks declare) changes.


if REMOTE_TESTBED:

    # On a remote testbed the host agent does it on each host: installs the platforms' tools
    # that are missing (apt-get) and builds the image of the same recipe there if it is missing.
    rule guest_image:
        output:
            GUEST_IMAGE,
        log:
            f"logs/images/{TESTBED}-{os.path.basename(IMAGE_DIR)}.log",
        params:
            platforms=",".join(config["platforms"]),
        shell:
            f"{sys.executable} -m virtrepro.testbed.remote prepare --testbed {TESTBED} --platforms {{params.platforms}}"
            " {output} > {log} 2>&1"

else:

    rule guest_image:
        output:
            [os.path.join(IMAGE_DIR, name) for name in IMAGE_FILES],
        log:
            f"logs/images/{os.path.basename(IMAGE_DIR)}.log",
        params:
            out=IMAGE_DIR,
        shell:
            f"{sys.executable} -m virtrepro.guests.image build {{params.out}} > {{log}} 2>&1"


# Which configured platforms the testbed's hosts can run (root or passwordless sudo, /dev/kvm):
# a cluster's compute nodes often allow neither; those platforms are left out with the reason
# (virtrepro.testbed.availability). Kept like every probe record: delete it to probe again.
checkpoint platform_probe:
    output:
        update(PLATFORM_PROBE),
    log:
        "logs/probes/{testbed}/platforms.log",
    params:
        # every platform there is, not only the configured ones: a later run with other platforms reads the same record
        platforms=",".join(platform_catalog.config_names()),
    shell:
        "if [ -s {output} ]; then echo 'kept {output}: a probe record is never replaced; delete it to probe again' > {log};"
        f" else {sys.executable} -m virtrepro.testbed.availability --testbed {{wildcards.testbed}} --platforms {{params.platforms}}"
        " {output} > {log} 2>&1; fi"


# Which QEMU accelerator works on the testbed: a real KVM boot, else TCG.
# Kept with the raw data, since it decides which platform the results belong to: like a raw
# log it is never replaced (a change of this rule's code keeps it); delete it to probe again.
checkpoint qemu_accel:
    input:
        ancient(GUEST_IMAGE),
    output:
        update(QEMU_PROBE),
    log:
        "logs/probes/{testbed}/qemu-accel.log",
    params:
        # on a remote testbed the probe boots the KVM guest on its host, through the host agent
        probe=f"virtrepro.testbed.remote probe-qemu --testbed {TESTBED}" if REMOTE_TESTBED else "virtrepro.platforms.qemu probe",
    shell:
        "if [ -s {output} ]; then echo 'kept {output}: a probe record is never replaced; delete it to probe again' > {log};"
        f" else {sys.executable} -m {{params.probe}} {{output}} > {{log}} 2>&1; fi"
