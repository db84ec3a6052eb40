# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The syzkaller revision the project builds and runs (manager, execprog
# and executor from one tree).
SYZ_REV=${SYZ_REV:-1e72964b0111319984575e60f266d1fa0a98abb5}
