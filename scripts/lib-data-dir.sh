# Sourced by scripts/fetch-model and scripts/fetch-ja-dict: where folio's installed data
# goes, the same rule as the Rust side (embed::builtin::default_model_dir,
# store::japanese::default_dictionary_dir).
#
#   folio_data_dir VAR SUBPATH
#
# prints $VAR when it is set and not empty (the folder itself), else
# $XDG_DATA_HOME/folio/SUBPATH when XDG_DATA_HOME is absolute, else
# $HOME/.local/share/folio/SUBPATH; fails when none of them is usable.
folio_data_dir() {
    local override=${!1:-} data=${XDG_DATA_HOME:-}
    if [ -n "$override" ]; then
        echo "$override"
        return
    fi
    case "$data" in
        /*) ;;
        *) [ -n "${HOME:-}" ] || { echo "neither $1, XDG_DATA_HOME nor HOME is set" >&2; return 1; }
           data=$HOME/.local/share ;;
    esac
    echo "$data/folio/$2"
}

# folio_sha256 FILE: prints the file's SHA-256 in hex (python3, or $PYTHON, reads it:
# sha256sum is not on every system).
folio_sha256() {
    "${PYTHON:-python3}" -c 'import hashlib,sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
print(h.hexdigest())' "$1"
}
