// CPU time on this machine, read from /proc: a process's threads, a tree of processes, every core.
import { readdirSync, readFileSync } from 'node:fs';

/** The CPU seconds the threads (or processes) of snapshot `after` spent since snapshot `before`
    (one new in `after` counts from zero). One that ended in between is left out: tokio ends a
    thread of its blocking pool after 10 s without work, so such a thread rarely ran in the
    window, and a browser's processes outlive its pages. */
export function cpuSecondsBetween(before, after) {
  let ns = 0;
  for (const [tid, t] of after) ns += t - (before.get(tid) ?? 0);
  return ns / 1e9;
}

/** The CPU time so far of each thread of process `pid`, in nanoseconds
    (`/proc/PID/task/TID/schedstat`), as a snapshot for `cpuSecondsBetween`. Finer than the
    process's `stat`, which counts in 10 ms ticks. */
export function threadsCpuSnapshot(pid) {
  const snapshot = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      snapshot.set(tid, Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended while the folder was read.
    }
  }
  return snapshot;
}

/** The machine's CPU time so far, summed over its cores, in ticks (`/proc/stat`'s `cpu` line):
    `total`, `idle` (idle and waiting for I/O) and `steal` (time the hypervisor gave a core that
    wanted to run to someone else). */
export function machineCpuSnapshot() {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is inside user.
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number);
  return { total: user + nice + system + idle + iowait + irq + softirq + steal, idle: idle + iowait, steal };
}

/** Between two machine snapshots, the share of all cores (percent) that was busy, steal included
    (a core the hypervisor took was not free for the bench either), and the share stolen. */
export function machineSharesBetween(before, after) {
  const total = after.total - before.total;
  if (total <= 0) return { busyPct: undefined, stealPct: undefined };
  return {
    busyPct: (100 * (total - (after.idle - before.idle))) / total,
    stealPct: (100 * (after.steal - before.steal)) / total,
  };
}

/** The CPU time so far of process `root` and every process under it (a browser's renderers, GPU
    and network processes), each process's threads together, as a snapshot for
    `cpuSecondsBetween`. In 10 ms ticks (`/proc/PID/stat`): a browser spends seconds on a fetch. */
export function processTreeCpuSnapshot(root) {
  const processes = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      // After the command name in parentheses (which may hold spaces): state, ppid, ... utime, stime.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1).split(' ');
      processes.push({ pid: Number(pid), ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The process ended while /proc was read.
    }
  }
  const inTree = new Set([root]);
  // /proc may list a child before its parent (pids wrap): sweep until nothing joins.
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of processes) {
      if (!inTree.has(p.pid) && inTree.has(p.ppid)) {
        inTree.add(p.pid);
        grew = true;
      }
    }
  }
  return new Map(processes.filter((p) => inTree.has(p.pid)).map((p) => [p.pid, p.ticks * 1e7]));
}
