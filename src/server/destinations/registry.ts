/**
 * The ad platforms cnv delivers to, registered once: a new platform is one folder and one line here. Each is served
 * through `cleanPlatform`, so no error it returns quotes a value cnv sent or any other identity value (platform-text.ts).
 */
import type { DestinationPlatform } from './destination';
import { cleanPlatform } from './platform-text';
import { googleAdsPlatform } from './google-ads';
import { metaPlatform } from './meta';
import { microsoftAdsPlatform } from './microsoft-ads';
import { linkedinPlatform } from './linkedin';
import { redditPlatform } from './reddit';
import { tiktokPlatform } from './tiktok';

const PLATFORMS: readonly DestinationPlatform[] = [
  googleAdsPlatform,
  metaPlatform,
  microsoftAdsPlatform,
  linkedinPlatform,
  redditPlatform,
  tiktokPlatform,
].map(cleanPlatform);

/** The platform of a destination type, or null when cnv does not deliver to it. */
export function platformFor(type: string): DestinationPlatform | null {
  return PLATFORMS.find((p) => p.type === type) ?? null;
}

/** Every destination type that can be connected and delivered to. */
export function supportedDestinationTypes(): string[] {
  return PLATFORMS.map((p) => p.type);
}
