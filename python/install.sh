#!/bin/sh
# Installs the rpca Python package into .venv at the repository's root:
# the Debian packages it needs (when missing, and when run as root), a
# virtual environment that sees them, and the package, whose library is
# built by the local Go toolchain. Run from anywhere: python/install.sh
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
need=""
for pkg in python3-numpy python3-scipy python3-sklearn python3-pytest python3-pip python3-setuptools python3-venv; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need="$need $pkg"
done
if [ -n "$need" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "python/install.sh: installing$need"
		apt-get install -y -q $need >/dev/null
	else
		echo "python/install.sh: missing Debian packages:$need (install them, e.g. sudo apt-get install$need)" >&2
		exit 1
	fi
fi
/usr/bin/python3 -m venv --system-site-packages "$root/.venv"
"$root/.venv/bin/pip" install -q --no-build-isolation --no-index "$root/python"
echo "python/install.sh: installed rpca into $root/.venv (use $root/.venv/bin/python)"
