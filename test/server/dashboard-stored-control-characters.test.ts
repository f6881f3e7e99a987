/**
 * A site name stored before names refused control characters (an ESC sequence, a line break) no longer blocks the
 * dashboard's Save of that site: the form shows it without them, says so, and the Save stores the cleaned name.
 */
import { describe, expect, it } from 'vitest';
import { createTestService } from './support/harness';
import { issueSignInLink } from '../../src/server/dashboard';
import { pressSignIn } from './support/dashboard-sign-in';

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

describe('a site whose stored name holds control characters', () => {
  it('is shown without them with a note, and Save (the form sent back as it is) stores the cleaned name', async () => {
    const svc = await createTestService({ CNV_PUBLIC_URL: 'http://cnv.test' });
    try {
      const site = svc.site;
      await svc.db.query('update sites set name = $2 where id = $1', [site.id, 'Shop\u001b[2J\r\nFront\u009b']);
      const signed = await pressSignIn(svc.app, (await issueSignInLink(svc.db, svc.settings, svc.accountId)).url);
      const cookie = String(signed.headers['set-cookie']).split(';')[0]!;
      const page = await svc.app.inject({ method: 'GET', url: '/dashboard/sites', headers: { cookie } });
      const input = new RegExp(`<input type="text" id="${site.id}-name" name="name" value="([^"]*)"`).exec(page.body);
      expect(input).not.toBeNull();
      const shown = decode(input![1]!);
      // The line break parted two words: it becomes a space; the ESC is left out, what followed it left for the person to see.
      expect(shown).toBe('Shop[2J Front');
      expect(page.body).toContain('The stored name held invisible control characters');
      const form = (name: string) => decode(new RegExp(`<input type="text" id="${site.id}-${name}" name="${name}" value="([^"]*)"`).exec(page.body)![1]!);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
      const saved = await svc.app.inject({
        method: 'POST', url: `/dashboard/sites/${site.id}`, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: csrf, name: shown, domain: form('domain'), timezone: form('timezone') }).toString(),
      });
      expect(saved.statusCode).toBe(303);
      const [row] = await svc.db.query<{ name: string }>('select name from sites where id = $1', [site.id]);
      expect(row!.name).toBe('Shop[2J Front');
      const after = await svc.app.inject({ method: 'GET', url: '/dashboard/sites', headers: { cookie } });
      expect(after.body).not.toContain('held invisible control characters');
    } finally {
      await svc.close();
    }
  });
});
