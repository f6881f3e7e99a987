/**
 * CPU time and memory of the service processes over a load window: CPU microseconds per request (user + system, from
 * process.cpuUsage in each service process: what one request costs a core, so requests per core elsewhere is
 * 1,000,000 / that), the peak RSS, and the requests each instance served (counted by its HTTP server).
 */

/**
 * Runs `load` between a usage-begin and a usage-end of every instance of `sut` (`section` names the window's CPU
 * profiles under --profile); returns its result and the usage.
 */
export async function withUsage(sut, section, load) {
  await sut.usageBegin(section);
  let result;
  try {
    result = await load();
  } catch (error) {
    await sut.usageEnd().catch(() => undefined);
    throw error;
  }
  return { result, usage: summariseUsage(await sut.usageEnd()) };
}

/** Totals over the instances, and each instance's figures. */
export function summariseUsage(perInstance) {
  const instances = perInstance.map((u) => {
    const cpuUs = u.cpu_user_us + u.cpu_system_us;
    const seconds = u.wall_ms / 1000;
    return {
      pid: u.pid,
      requests: u.requests,
      requests_per_s: u.requests / seconds,
      cpu_us_per_request: u.requests > 0 ? cpuUs / u.requests : null,
      cpu_share: cpuUs / 1000 / u.wall_ms,
      http_thread_busy: u.http_thread_busy,
      statements_per_request: u.requests > 0 ? u.statements / u.requests : null,
      rss_peak_mb: u.rss_peak_mb,
      heap_at_peak_mb: u.heap_at_peak_mb,
      external_at_peak_mb: u.external_at_peak_mb,
    };
  });
  const requests = instances.reduce((n, i) => n + i.requests, 0);
  const cpuUs = perInstance.reduce((n, u) => n + u.cpu_user_us + u.cpu_system_us, 0);
  return {
    requests,
    cpu_us_per_request: requests > 0 ? cpuUs / requests : null,
    rss_peak_mb: Math.max(...instances.map((i) => i.rss_peak_mb)),
    /** The HTTP thread's JavaScript heap and V8's external memory when the first instance's RSS peaked. */
    heap_at_peak_mb: instances[0]?.heap_at_peak_mb,
    external_at_peak_mb: instances[0]?.external_at_peak_mb,
    /** CPU of the processes in cores (1.5: one and a half cores busy on average), and their HTTP threads' busy share. */
    cpu_cores: instances.reduce((n, i) => n + i.cpu_share, 0),
    http_thread_busy: Math.max(...instances.map((i) => i.http_thread_busy ?? 0)),
    statements_per_request: requests > 0 ? perInstance.reduce((n, u) => n + (u.statements ?? 0), 0) / requests : null,
    sql: perInstance[0]?.sql,
    profiles: perInstance.map((u) => u.profile).filter(Boolean),
    instances,
  };
}
