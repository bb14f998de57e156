#!/usr/bin/env bash
# Drives `edgelm run` in a real pseudo-terminal (tmux): two turns, Ctrl+C during a reply, Ctrl+C at the prompt,
# /reset, Ctrl+D. Prints the screen after each step. Run by hand from the repository root:
#   tools/chat-pty/drive.sh [MODEL]      (default: the tiny-chat test checkpoint)
# Needs tmux. Look for: each reply under its prompt, "(stopped)" after the Ctrl+C during the long reply,
# the line typed before the Ctrl+C at the prompt is not sent, and the session ends on Ctrl+D.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
model=${1:-$root/src/test/resources/fixtures/qwen35/tiny-chat}
session=edgelm-chat-$$
"$root/bin/edgelm" --version >/dev/null # build the jar first, outside the timed steps
# greedy replies of the tiny test model end within a few dozen tokens; near-uniform sampling makes long ones, so
# that there is time to press Ctrl+C during a reply
tmux new-session -d -s "$session" -x 120 -y 50 \
  "$root/bin/edgelm run '$model' --system 'You are a helpful assistant.' --threads 1 --temperature 10 --seed 1; echo '[exit '\$?']'; sleep 30"
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT

# the whole scrollback, lines cut at 100 characters
screen() { tmux capture-pane -p -S - -t "$session" | sed -e 's/[[:space:]]*$//' | grep -v '^$' | cut -c1-100 || true; }
wait_for() { # wait_for TEXT COUNT: until TEXT shows COUNT times
  for _ in $(seq 1 300); do
    [ "$(screen | grep -cF -- "$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  echo "timed out waiting for '$1' x$2" >&2; screen >&2; exit 1
}
keys() { tmux send-keys -t "$session" "$@"; }
step() { echo "--- $1"; screen | tail -n "${2:-8}"; }

wait_for '>>>' 1
keys 'What is the capital of France? Answer in one word.' Enter
wait_for '>>>' 2
step "turn 1"
keys 'Tell me a long story.' Enter
sleep 1
keys C-c
wait_for '(stopped)' 1
wait_for '>>>' 3
step "turn 2, stopped with Ctrl+C"
keys 'this line is dropped'
sleep 0.3
keys C-c
sleep 0.3
keys 'And of Germany?' Enter
wait_for '>>>' 5 # the dropped line's prompt counts too
step "Ctrl+C at the prompt, then turn 3"
keys '/reset' Enter
wait_for '(conversation cleared)' 1
keys C-d
wait_for '[exit 0]' 1
step "/reset, Ctrl+D" 4
