# The guest image every container and VM platform starts from, built offline
# from Debian's archive; its directory is named by the hash of its recipe, so it
# is rebuilt exactly when the recipe (workflow/virtrepro/guests/image.py) changes.


rule guest_image:
    output:
        [os.path.join(IMAGE_DIR, name) for name in IMAGE_FILES],
    log:
        f"logs/images/{os.path.basename(IMAGE_DIR)}.log",
    params:
        out=IMAGE_DIR,
    shell:
        f"{sys.executable} -m virtrepro.guests.image build {{params.out}} > {{log}} 2>&1"


# Which QEMU accelerator works on the testbed: a real KVM boot, else TCG.
# Kept with the raw data, since it decides which platform the results belong to.
checkpoint qemu_accel:
    input:
        ancient(os.path.join(IMAGE_DIR, "image.json")),
    output:
        QEMU_PROBE,
    log:
        "logs/probes/{testbed}/qemu-accel.log",
    shell:
        f"{sys.executable} -m virtrepro.platforms.qemu probe {{output}} > {{log}} 2>&1"
