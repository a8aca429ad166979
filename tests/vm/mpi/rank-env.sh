#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Wraps each MPI rank of the MPI run: UCX_IB_GID_INDEX is this guest's own
# RoCE v2 GID of an IPv4 address on the RDMA device of UCX_NET_DEVICES
# (port 1), read from sysfs (the index differs between guests, and UCX's
# default, 0, is the link-local GID), then runs the command.
#
# Copyright (c) 2026 The hpu authors
dev=${UCX_NET_DEVICES%%:*}
for g in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
	n=${g##*/}
	case $(cat "$g" 2>/dev/null) in
	0000:0000:0000:0000:0000:ffff:*)
		if [ "$(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$n" 2>/dev/null)" = "RoCE v2" ]; then
			UCX_IB_GID_INDEX=$n
			export UCX_IB_GID_INDEX
			break
		fi
		;;
	esac
done
[ -n "${UCX_IB_GID_INDEX:-}" ] || { echo "rank-env: no IPv4 RoCE v2 GID on $dev port 1" >&2; exit 99; }
exec "$@"
