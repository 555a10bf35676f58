// SPDX-License-Identifier: MIT
/*
 * Compiled once per installed header, which meson force-includes (-include)
 * with only include/ on the path: an installed header must stand alone, with
 * nothing of src/ and no header included before it.
 */
int header_check_anchor(void);
