/**
 * What the whole machine did with its cores over a load window, from the kernel's CPU counters (/proc/stat): how much
 * of the time the hypervisor gave the cores to other guests (steal), and how much was idle. On a shared virtual
 * machine, steal comes in bursts (15 to 48 % of the cores for several seconds, measured on the 2-core machine these
 * figures come from) and a window caught in one measures the host, not the service: its throughput falls, its p99
 * doubles, and its CPU time per request rises, since a guest kernel without steal accounting charges the stolen time
 * to whatever was running. Printed beside every window so such a figure explains itself.
 */
import { readFileSync } from 'node:fs';

/**
 * A window is disturbed when steal took this share of it on average, or PEAK_STEAL_SHARE of its worst second (a p99
 * is the worst 1 % of a window: one second in ten with half the cores gone moves it as much as a steady tenth).
 */
export const DISTURBED_STEAL_SHARE = 0.1;
export const DISTURBED_PEAK_STEAL_SHARE = 0.3;

/** The fields of /proc/stat's aggregate `cpu` line, in the kernel's order (guest time is already inside user). */
const FIELDS = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal'];

/**
 * The aggregate `cpu` line of /proc/stat's text as counters (clock ticks since boot), or null when there is none
 * (not Linux, or a format this does not know).
 */
export function parseProcStatCpu(text) {
  const line = text.split('\n').find((l) => /^cpu\s/.test(l));
  if (!line) return null;
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  if (values.length < FIELDS.length || values.some((v) => !Number.isFinite(v) || v < 0)) return null;
  return Object.fromEntries(FIELDS.map((name, i) => [name, values[i]]));
}

/** The machine's counters now, or null where /proc/stat cannot be read. */
export function readMachineTime() {
  try {
    return parseProcStatCpu(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Shares of all CPU time between two readings: `steal` (the hypervisor ran other guests), `idle` (idle and iowait),
 * and `busy` (this machine's processes and kernel); null when either reading is missing or no tick passed.
 */
export function machineShares(before, after) {
  if (!before || !after) return null;
  const delta = Object.fromEntries(FIELDS.map((name) => [name, after[name] - before[name]]));
  if (FIELDS.some((name) => delta[name] < 0)) return null;
  const total = FIELDS.reduce((n, name) => n + delta[name], 0);
  if (total === 0) return null;
  const idle = delta.idle + delta.iowait;
  return { steal: delta.steal / total, idle: idle / total, busy: (total - idle - delta.steal) / total };
}

/**
 * Runs `fn`, returning its result and the machine's shares over it, with `peak_steal`: the largest steal of any whole
 * second in it (read once a second; a reading costs microseconds). `read` stands in for /proc/stat in tests.
 */
export async function withMachineTime(fn, { sampleMs = 1000, read = readMachineTime } = {}) {
  const before = read();
  let last = before;
  let peakSteal = null;
  const timer = setInterval(() => {
    const now = read();
    const second = machineShares(last, now);
    if (second) peakSteal = Math.max(peakSteal ?? 0, second.steal);
    last = now;
  }, sampleMs);
  try {
    const result = await fn();
    const shares = machineShares(before, read());
    return { result, machine: shares && { ...shares, peak_steal: peakSteal ?? shares.steal } };
  } finally {
    clearInterval(timer);
  }
}

/** A share (0..1) as a whole percent: `12%`. */
export function percent(share) {
  return `${Math.round(share * 100)}%`;
}

/** `steal 3% (worst second 12%), idle 20%`, or null when the shares are unknown. */
export function formatShares(machine) {
  if (!machine) return null;
  return `steal ${percent(machine.steal)} (worst second ${percent(machine.peak_steal ?? machine.steal)}), idle ${percent(machine.idle)}`;
}

/** The line printed under a window: what the machine did meanwhile, and whether the window counts as disturbed. */
export function machineLine(what, machine) {
  if (!machine) return `machine during ${what}: unknown (no /proc/stat)`;
  const note = isDisturbed(machine) ? ' -> DISTURBED: the hypervisor took the cores from this window; it measured the host, run again' : '';
  return `machine during ${what}: ${formatShares(machine)} of all CPU time${note}`;
}

/** Whether steal took DISTURBED_STEAL_SHARE of a window, or DISTURBED_PEAK_STEAL_SHARE of its worst second. */
export function isDisturbed(machine) {
  return disturbance(machine) >= 1;
}

/** How disturbed a window was: 1 or more is disturbed (its steal over the thresholds); 0 when unknown. */
export function disturbance(machine) {
  if (!machine) return 0;
  return Math.max(machine.steal / DISTURBED_STEAL_SHARE, (machine.peak_steal ?? 0) / DISTURBED_PEAK_STEAL_SHARE);
}

/** The more disturbed of several windows (a ratio's two sides); null when none is known. */
export function worstOf(...machines) {
  const known = machines.filter(Boolean);
  if (known.length === 0) return null;
  return known.reduce((worst, m) => (disturbance(m) > disturbance(worst) ? m : worst));
}

/** A summary cell: `3% / 12%` (the window's steal, its worst second's), or `-`. */
export function stealCell(machine) {
  if (!machine) return '-';
  return `${percent(machine.steal)} / ${percent(machine.peak_steal ?? machine.steal)}`;
}

/** CPU time (user + system, in clock ticks) a process has used, from /proc/<pid>/stat; null where it cannot be read. */
export function readProcessTicks(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' '); // after the command, which may hold spaces
    const ticks = Number(fields[11]) + Number(fields[12]); // utime and stime, the 14th and 15th fields
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/**
 * Waits until the processes `pids` together use less than `maxCores` of a core over a `sampleMs` window (the service
 * done with what a load left it: events built after a burst, deliveries, an analyze or a checkpoint), or `timeoutMs`
 * passed; resolves with whether they went idle. A bare route measured while the service still works in the background
 * is slower, which would flatter the service's ratio. Where /proc cannot be read, resolves at once (true). `read`,
 * `sleep` and `ticksPerSecond` stand in for the system in tests.
 */
export async function waitUntilIdle(pids, {
  maxCores = 0.05,
  sampleMs = 500,
  timeoutMs = 60_000,
  ticksPerSecond = 100,
  read = readProcessTicks,
  sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
} = {}) {
  const total = () => {
    const each = pids.map(read);
    return each.some((t) => t === null) ? null : each.reduce((n, t) => n + t, 0);
  };
  let before = total();
  if (before === null) return true;
  for (let waited = 0; waited < timeoutMs; waited += sampleMs) {
    await sleep(sampleMs);
    const after = total();
    if (after === null) return true;
    if ((after - before) / ticksPerSecond / (sampleMs / 1000) < maxCores) return true;
    before = after;
  }
  return false;
}
