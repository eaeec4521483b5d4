# Sourced by the anchor benchmarks (bench_quant_vs_torchao.sh, bench_scan_vs_anchors.sh): a
# throw-away venv outside the project for a tool replay is compared against (never a
# dependency), which reuses the project's torch through a .pth file, so the anchor runs on the
# very torch that replay links and nothing large is downloaded.
#
#   throwaway_venv NAME VARIABLE VENV
#
# NAME is the calling script's name and VARIABLE the environment variable that sets VENV, for
# messages. Needs ROOT (the project) and PYTHON. Exits 2
# when VENV lies inside the project, 3 when it cannot be made.
throwaway_venv() {
  local name=$1 variable=$2 venv=$3
  case "$venv" in
    "$ROOT"|"$ROOT"/*)
      echo "$name: $variable must be outside the project ($venv)" >&2
      exit 2 ;;
  esac
  if [ ! -x "$venv/bin/python" ]; then
    echo "== creating $venv"
    "$PYTHON" -m venv "$venv" || { echo "$name: cannot create a venv at $venv" >&2; exit 3; }
  fi
  local project_site venv_site
  project_site=$("$ROOT/.venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
  venv_site=$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
  echo "$project_site" >"$venv_site/replay_project_torch.pth"
}
