# Sourced by tests/run-all.sh and the suites' lib.sh, with LL_PY_REPO set to
# the repository (sh's '.' takes no arguments).
# A python3 found through a version manager's shim (pyenv's is a bash script:
# about 0.4 s of CPU a start on the 2-core CI machine, against 0.05 s for the
# interpreter itself) costs more than the few lines it runs, and the suites
# start python3 hundreds of times (tc -j parsing, JSON checks). Put the
# interpreter the shim resolves to first on PATH, through a directory that
# holds only a python3 link (build/.python3/), so nothing else on PATH moves.
_llpy=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -n "$_llpy" ] && [ -x "$_llpy" ] && [ "$_llpy" != "$(command -v python3)" ] &&
   mkdir -p "$LL_PY_REPO/build/.python3" 2>/dev/null &&
   ln -sfn "$_llpy" "$LL_PY_REPO/build/.python3/python3" 2>/dev/null; then
	case ":$PATH:" in *":$LL_PY_REPO/build/.python3:"*) ;; *) PATH="$LL_PY_REPO/build/.python3:$PATH" ;; esac
	export PATH
fi
unset _llpy
