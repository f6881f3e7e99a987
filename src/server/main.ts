/** The service alone (production): loads the settings, starts the service, prints how to use it, stops on a signal. */
import { loadSettings } from './settings';
import { startupBanner } from './banner';
import { startService, useTerminalDefaults } from './service';
import { runUntilSignal } from './run-until-signal';
import { useServiceHeapGrowth } from './heap-growth';

useServiceHeapGrowth();
useTerminalDefaults();
runUntilSignal(async () => {
  const service = await startService(loadSettings());
  return {
    banner: startupBanner(service) + '\n',
    close: () => service.close(),
    log: (message, fields) => service.app.log.info(fields, message),
  };
});
