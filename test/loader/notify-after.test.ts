import { describe, expect, test, vi } from 'vitest';
import { notifyAfter } from '../../src/loader/notify-after';

describe('following a method of the page', () => {
  test('the method keeps its this, arguments and result, and notify runs after it', () => {
    const log: string[] = [];
    const target = {
      items: [] as number[],
      add(...items: number[]) {
        log.push('add');
        this.items.push(...items);
        return this.items.length;
      },
    };
    notifyAfter(target, 'add', () => log.push('notify'));
    expect(target.add(1, 2)).toBe(2);
    expect(target.items).toEqual([1, 2]);
    expect(log).toEqual(['add', 'notify']);
  });

  test('a method that throws still throws to its caller, and notify does not run', () => {
    const notify = vi.fn();
    const target = {
      fail(): never {
        throw new Error('page bug');
      },
    };
    notifyAfter(target, 'fail', notify);
    expect(() => target.fail()).toThrow('page bug');
    expect(notify).not.toHaveBeenCalled();
  });
});
