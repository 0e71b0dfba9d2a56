/* SPDX-License-Identifier: MIT */
/* cli.c - command dispatch: `linklab [COMMAND] [options]`. */
#include <stdio.h>
#include <string.h>

#include "linklab/cli/cli.h"
#include "linklab/cli/prompt.h"
#include "linklab/cli/safeout.h"
#include "linklab/remote/ssh.h"

struct cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
};

static const struct cli_cmd cli_cmds[] = {
	{ "console", cmd_console,
	  "console [--peer HOST] [--dev IF] [--peer-dev IF] [-F FILE] [--ssh-key FILE]\n"
	  "                 [--known-hosts FILE] [--accept-new] [--peer-data ADDR] [-c ADDR]\n"
	  "                 [--engine auto|kernel|user]\n"
	  "                 [--middle HOST [--bridge IF_A,IF_B [--middle-engine auto|kernel|user]]]" },
	{ "links", cmd_links, "links [--peer HOST] [-J]" },
	{ "apply", cmd_apply,
	  "apply [--peer HOST] [--dev IF] [--peer-dev IF] [--local|--remote|--split]\n"
	  "                 [--profile NAME] [--engine auto|kernel|user] [--dry-run|--check] [-J] DIAL...\n"
	  "                 DIAL: --rate R --burst B --delay T --jitter T --loss P --duplicate P\n"
	  "                 --corrupt P --reorder P --gap N --limit N ... (tc units: 50mbit, 100ms, 1%)\n"
	  "                 --split halves delay/jitter (A takes an odd ns, so both add back to\n"
	  "                 the value given) and splits loss 1-(1-p)^1/2 per peer" },
	{ "show", cmd_show, "show [--peer HOST] [--dev IF] [--peer-dev IF] [-J] [--journal]" },
	{ "clear", cmd_clear,
	  "clear [--peer HOST] [--dev IF] [--peer-dev IF] [--local|--remote] [--all]\n"
	  "                 [--force] [--forget]" },
	{ "test", cmd_test_peer,
	  "test (--peer HOST [-F FILE] [--peer-data ADDR] | -c ADDR [-p PORT]) [-P N] [-t SEC]\n"
	  "                 [-i SEC] [-R] [--bidir] [-u] [-b RATE] [-l LEN] [-w SIZE] [-J]\n"
	  "                 (linklab test -h lists every option)" },
	{ "verify", cmd_verify,
	  "verify (--peer HOST | -c ADDR [-p PORT]) [--dev IF] [--peer-dev IF] [--middle HOST]\n"
	  "                 [-t SEC] [--base-rtt MS] [-J]   (the dial read back vs what the wire does)" },
	{ "rpm", cmd_rpm,
	  "rpm (--peer HOST | -c ADDR [-p PORT]) [-P N] [-t SEC] [-R|--bidir] [-C CC] [--round SEC] [-J]\n"
	  "                 (responsiveness under load: idle vs working RTT, RPM)" },
	{ "serve", cmd_serve, "serve [-p PORT] [-B ADDR] [-1]" },
	{ "bridge", cmd_bridge, "bridge IF_A IF_B [--engine auto|kernel|user] [dial options] [-t SEC]\n"
	  "                 [--force] [-J | --stdin-lease]\n"
	  "                 bridge --status|--set [dial options]|--attach [--pid N] [-J]   (a running bridge)" },
	{ "profile", cmd_profile, "profile list | show NAME | fields | save NAME [--force] [--description TEXT] DIAL... |\n                 rename NAME NEW | delete NAME" },
	{ "offload", cmd_offload,
	  "offload [--peer HOST] [--dev IF] [--peer-dev IF] [--local|--remote] [tso|gso|gro|all on|off]... [--restore]" },
	{ "sysctl", cmd_sysctl,
	  "sysctl [--peer HOST] [--local|--remote] [NAME=VALUE]... [--restore]   (TCP buffers, cc)" },
	{ NULL, NULL, NULL },
};

static void cli_usage(FILE *f)
{
	const struct cli_cmd *c;

	fprintf(f, "usage: linklab [COMMAND] [options]   (default command: console)\n\n");
	for (c = cli_cmds; c->name; c++)
		fprintf(f, "  linklab %s\n", c->usage);
	fprintf(f, "\nHOST is an ssh_config alias or [user@]host[:port], resolved by `ssh -G`.\n"
		"Units as tc: rates 50mbit (bit/s) or 6mbps (bytes/s), times 100ms, loss 1%%.\n"
		"Common options: -F FILE (ssh config), --ssh-key FILE, --known-hosts FILE,\n"
		"--accept-new, --peer-data ADDR (test traffic address), --exclude-ssh,\n"
		"--peer-timeout SEC, -h for this text.\n");
}

/* True for the commands that take the peer options (cmd_common_opt,
 * peerset_parse_opt). */
static bool cli_has_peer_opts(const char *cmd)
{
	static const char *const names[] = { "apply", "show", "clear", "links",
					     "offload", "sysctl", "verify", "rpm", NULL };
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(names[i], cmd))
			return true;
	return false;
}

void cli_print_usage(const char *cmd, FILE *f)
{
	const struct cli_cmd *c;

	for (c = cli_cmds; c->name; c++)
		if (!strcmp(c->name, cmd))
			fprintf(f, "usage: linklab %s\n", c->usage);
	if (cli_has_peer_opts(cmd))
		fprintf(f, "common options: -F FILE, --ssh-key FILE, --known-hosts FILE, --accept-new,\n"
			"  --force, --exclude-ssh, --revert-after SEC, --peer-timeout SEC\n"
			"  (--revert-after: B undoes a change it is not told to keep within SEC s,\n"
			"  default 30; a confirmed dial stays until clear)\n");
	fprintf(f, "(see `linklab help` and man linklab)\n");
}

int cli_main(int argc, char **argv)
{
	const struct cli_cmd *c;

	/* SSH passphrases/passwords are asked on the tty (the console may
	 * pass its own prompt through sshcfg_opts) */
	ssh_set_default_prompt(prompt_tty, NULL);
	/* what a peer, a server or a file says reaches the terminal with its
	 * control bytes made visible; curses keeps the console's stdout */
	safeout_install(argc >= 2 && argv[1][0] != '-' && strcmp(argv[1], "console"));
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			cli_usage(stdout);
			return 0;
		}
		if (argc >= 2 && (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))) {
			printf("linklab 0.1\n");
			return 0;
		}
		/* Options only: the console. */
		return cmd_console(argc, argv);
	}
	if (!strcmp(argv[1], "help")) {
		cli_usage(stdout);
		return 0;
	}
	/* hidden: the endpoint engine process that apply starts */
	if (!strcmp(argv[1], "engine"))
		return cmd_engine(argc - 1, argv + 1);
	for (c = cli_cmds; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->run(argc - 1, argv + 1);
	fprintf(stderr, "linklab: unknown command '%s'\n\n", argv[1]);
	cli_usage(stderr);
	return 2;
}
