#!/bin/sh
# PID 1 of the smartio guest image (tools/vm/build-image.sh): mount the
# pseudo file systems, run the command the kernel command line carries
# (smartio.cmd=BASE64), print its status in a line the host looks for, and
# power off (the guest's QEMU then exits).
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/
cmd=""
for a in $(cat /proc/cmdline); do
	case "$a" in
	smartio.cmd=*) cmd=$(echo "${a#smartio.cmd=}" | base64 -d) ;;
	esac
done
echo "SMARTIO-START"
if [ -n "$cmd" ]; then
	sh -c "$cmd"
	rc=$?
else
	echo "no smartio.cmd= on the kernel command line: a shell (exit to power off)"
	setsid cttyhack sh
	rc=$?
fi
echo "SMARTIO-EXIT $rc"
sync
poweroff -f
