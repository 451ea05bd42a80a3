// CPU time on this machine, read from /proc: one process's threads, and every core's.
import { readFileSync } from 'node:fs';

/** The CPU seconds the threads of snapshot `after` spent since snapshot `before` (a thread new in
    `after` counts from zero). A thread that ended in between is left out: tokio ends a thread of
    its blocking pool after 10 s without work, so such a thread rarely ran in the window. */
export function cpuSecondsBetween(before, after) {
  let ns = 0;
  for (const [tid, t] of after) ns += t - (before.get(tid) ?? 0);
  return ns / 1e9;
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
