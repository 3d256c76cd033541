#!/bin/sh
# `make install`: recalld in a virtual environment of its own, its command on the user's PATH.
#
# Like pipx or `uv tool install`, without needing either, and without root:
#   - the environment:  $RECALLD_HOME (default ~/.local/share/recalld)/venv
#   - the command:      $RECALLD_BIN_DIR (default ~/.local/bin)/recalld, a symbolic link
#   - extras:           $RECALLD_EXTRAS, comma-separated (postgres, torch), none by default
# This checkout is installed as a wheel (not editable), so the clone may move or go.
# Running it again upgrades in place. Uninstall: remove both paths.
set -eu

python=${PYTHON:-python3}
data_home=${XDG_DATA_HOME:-$HOME/.local/share}
data_directory=$data_home/recalld
recalld_home=${RECALLD_HOME:-$data_directory}
bin_dir=${RECALLD_BIN_DIR:-$HOME/.local/bin}
venv=$recalld_home/venv
source_dir=$(cd "$(dirname "$0")/.." && pwd)
extras=${RECALLD_EXTRAS:-}
target=$source_dir
if [ -n "$extras" ]; then
    # pip only warns about an extra the package does not have: refuse it here instead.
    for extra in $(echo "$extras" | tr ',' ' '); do
        case $extra in
            postgres|torch) ;;
            *) echo "RECALLD_EXTRAS: unknown extra '$extra' (postgres, torch)" >&2; exit 1 ;;
        esac
    done
    target="$source_dir[$extras]"
fi

# The data directory: recalld keeps the memories (recalld.db) there too, so it is made
# owner-only, as recalld itself makes it; one already there keeps its mode. Another
# RECALLD_HOME holds only the environment: it gets the umask's mode (an install under
# /opt for every user of the machine must stay readable by them).
if [ "$recalld_home" = "$data_directory" ]; then
    [ -d "$recalld_home" ] || mkdir -p -m 700 "$recalld_home"
else
    mkdir -p "$recalld_home"
fi
mkdir -p "$bin_dir"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet --upgrade "$target"
ln -sf "$venv/bin/recalld" "$bin_dir/recalld"

command_path=$bin_dir/recalld
version=$("$command_path" --version)
echo "installed $version"
echo "  environment: $venv"
echo "  command:     $command_path"
case ":${PATH:-}:" in
    *":$bin_dir:"*) ;;
    *) echo "  note: $bin_dir is not on your PATH; add it (e.g. in ~/.profile:" \
        "export PATH=\"$bin_dir:\$PATH\") or use the full path above" ;;
esac
echo "Use this absolute path as the \"command\" in your agent's MCP configuration:"
echo "  $command_path"
