/** `npm start`: the service and, unless CNV_DEMO_PORT=off, the demo site beside it with its local fake ad platforms. */
import { loadSettings } from '../server/settings';
import { startupBanner } from '../server/banner';
import { runUntilSignal } from '../server/run-until-signal';
import { useServiceHeapGrowth } from '../server/heap-growth';
import { useTerminalDefaults } from '../server/service';
import { startServiceWithDemo } from './with-service';
import { demoBannerLines } from './banner';

useServiceHeapGrowth();
useTerminalDefaults();
runUntilSignal(async () => {
  const running = await startServiceWithDemo(loadSettings());
  const demo = running.demo ? demoBannerLines(running.demo).join('\n') + '\n' : '';
  return {
    banner: startupBanner(running.service) + '\n' + demo,
    close: () => running.close(),
    log: (message, fields) => running.service.app.log.info(fields, message),
  };
});
