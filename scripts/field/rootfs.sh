#!/usr/bin/env bash
# The field test's board OS (scripts/field.sh): a small Debian bookworm
# arm64 root filesystem, the kind a user flashes before running
# scripts/flash.sh on it: systemd, systemd-networkd, udev, Debian's arm64
# kernel with its initramfs, no desktop. Built once with mmdebstrap under qemu-user-static into
#   $CACHE/rootfs.tar     the root filesystem (kernel modules trimmed)
#   $CACHE/vmlinuz        Debian's arm64 kernel, booted with -kernel
#   $CACHE/initrd.img     its initramfs (virtio disk, ext4)
#   $CACHE/.ok            "linux-image-... version" once all three exist
# Usage: rootfs.sh CACHE (exit 0 at once when CACHE/.ok exists).
set -euo pipefail
CACHE=${1:?usage: rootfs.sh CACHE}
[ -e "$CACHE/.ok" ] && exit 0
[ "$(id -u)" -eq 0 ] || {
	echo "field: building the board OS needs root (mmdebstrap, binfmt_misc)" >&2
	exit 1
}
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
	mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
	update-binfmts --enable qemu-aarch64 2>/dev/null || systemd-binfmt 2>/dev/null || true
fi
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || {
	echo "field: no binfmt_misc entry for qemu-aarch64 (apt-get install qemu-user-static binfmt-support)" >&2
	exit 1
}
mkdir -p "$CACHE"
rm -rf "$CACHE/tmp"
mkdir -p "$CACHE/tmp"
echo "field: building the board OS (Debian bookworm arm64, mmdebstrap under qemu-user; once, some minutes)"
# initramfs: only what -M virt needs to mount the root (built-ins are skipped)
nice -n 19 mmdebstrap --arch=arm64 --variant=minbase --mode=root \
	--include=systemd,systemd-sysv,udev,kmod,iproute2,adduser,procps,linux-image-arm64,initramfs-tools,zstd \
	--essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" && echo MODULES=list >"$1/etc/initramfs-tools/conf.d/ews-field.conf" && printf "%s\n" virtio_mmio virtio_pci virtio_blk ext4 >"$1/etc/initramfs-tools/modules"' \
	--customize-hook='cp "$1"/boot/vmlinuz-* "'"$CACHE"'/tmp/vmlinuz" && cp "$1"/boot/initrd.img-* "'"$CACHE"'/tmp/initrd.img"' \
	--customize-hook='chroot "$1" dpkg-query -W -f "\${Package} \${Version}\n" "linux-image-*-arm64" >"'"$CACHE"'/tmp/kernel"' \
	--customize-hook='rm -rf "$1"/boot/* "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/locale/* "$1"/var/cache/apt/*.bin "$1"/var/lib/apt/lists/*' \
	--customize-hook='for d in sound media gpu net/wireless net/ethernet infiniband staging scsi usb bluetooth iio input hid video isdn mtd crypto; do rm -rf "$1"/lib/modules/*/kernel/drivers/$d; done; rm -rf "$1"/lib/modules/*/kernel/{sound,net/wireless,net/bluetooth,net/mac80211}; chroot "$1" sh -c "depmod -a \$(ls /lib/modules)"' \
	bookworm "$CACHE/tmp/rootfs.tar" http://deb.debian.org/debian
mv "$CACHE/tmp/vmlinuz" "$CACHE/tmp/initrd.img" "$CACHE/tmp/rootfs.tar" "$CACHE/"
mv "$CACHE/tmp/kernel" "$CACHE/.ok"
rmdir "$CACHE/tmp"
echo "field: board OS cached in $CACHE ($(cat "$CACHE/.ok"))"
