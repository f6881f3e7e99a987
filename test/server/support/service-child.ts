/** The service in a process of its own, on the embedded store in CHILD_DATA_DIR (bundled by the kill -9 test); prints its URL. */
import { startService } from '../../../src/server/service';
import { loadSettings } from '../../../src/server/settings';

const service = await startService(
  loadSettings({
    HOST: '127.0.0.1',
    PORT: '0',
    CNV_DATA_DIR: process.env.CHILD_DATA_DIR!,
    CNV_SECRET_KEY: process.env.CHILD_SECRET_KEY!,
    CNV_DEMO_PORT: 'off',
    LOG_LEVEL: 'silent',
  }),
  { onProgress: () => undefined },
);
console.log(`listening ${service.urls.listening}`);
