/* SPDX-License-Identifier: MIT */
/* safeout.h - terminal-safe stdout/stderr for the commands. */
#ifndef LINKLAB_SAFEOUT_H
#define LINKLAB_SAFEOUT_H

/* Replace stderr (and stdout when with_stdout) by streams that write to fd 2
 * (fd 1) through text_sanitize_n (text.h): C0/C1 controls other than newline
 * and tab, DEL and invalid UTF-8 print as \xNN. stdout stays line-buffered on
 * a tty, fully buffered otherwise; stderr unbuffered. The console keeps the
 * real stdout (curses draws on it). */
void safeout_install(int with_stdout);

#endif
