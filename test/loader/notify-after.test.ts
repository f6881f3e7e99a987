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

  test('a method inherited read-only (a frozen prototype, as on a hardened page) is followed, and stays assignable', () => {
    const proto = Object.freeze({ add: (n: number) => n + 1 });
    const target = Object.create(proto) as { add(n: number): number };
    // The override mistake: assigning an own property over a read-only inherited one is refused.
    expect(() => {
      'use strict';
      target.add = (n) => n;
    }).toThrow(TypeError);
    const notify = vi.fn();
    notifyAfter(target, 'add', notify);
    expect(target.add(1)).toBe(2);
    expect(notify).toHaveBeenCalledTimes(1);
    // A tag that later wraps the method by assignment (Google's tag replaces dataLayer.push) still can.
    target.add = (n) => n * 10;
    expect(target.add(1)).toBe(10);
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
