#!/bin/sh
# Install the Debian packages linklab needs, only those that are missing.
set -u
PKGS="build-essential pkg-config libncurses-dev libnl-route-3-dev libssh2-1-dev
libiniparser-dev libcmocka-dev libcjson-dev openssh-server openssh-client iperf3 tmux
iproute2 strace procps clang libclang-rt-dev ethtool python3 ansible-core
libnetfilter-queue-dev iptables"
missing=""
for p in $PKGS; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "linklab: missing packages:$missing" >&2
	echo "linklab: run 'sudo make deps' (or apt-get install$missing)" >&2
	exit 1
fi
echo "linklab: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || exit 1
# policy-rc.d keeps the package from starting a host-wide sshd.
prc=/usr/sbin/policy-rc.d
created=0
if [ ! -e "$prc" ]; then printf '#!/bin/sh\nexit 101\n' > "$prc"; chmod +x "$prc"; created=1; fi
apt-get install -y -qq --no-install-recommends $missing
rc=$?
[ "$created" = 1 ] && rm -f "$prc"
exit $rc
