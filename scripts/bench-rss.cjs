// Preloaded by the benchmark into each measured process: reports its peak memory.
'use strict';
process.on('exit', () => {
  require('node:fs').writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS));
});
