#!/bin/sh
# SPDX-License-Identifier: MIT
#
# One connection of the MPI run's exec server (run under `busybox nc -ll
# -p 7001 -e exec-server.sh` in the guest that mpirun does not run in):
# reads the run's token and one command line, and runs the line with
# sh (the orted command line of hpu-rsh, quoted for a remote shell).
# A connection without the token runs nothing. The server only listens
# during the run, on the guests' private link.
#
# Copyright (c) 2026 The hpu authors
read -r token || exit 1
[ -n "${MPI_TOKEN:-}" ] && [ "$token" = "$MPI_TOKEN" ] || { echo "exec-server: bad token" >&2; exit 1; }
read -r line || exit 1
exec /bin/sh -c "$line" < /dev/null 2>&1
