// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, test, vi, type Mock } from 'vitest';
import { watchIntent } from '../../src/loader/intent';
import { addSignupForm, preparePage, resetPage } from './harness';

let intents: Mock<() => void>;
beforeEach(() => {
  preparePage('https://www.example.com/signup', 404, null);
  intents = vi.fn();
  watchIntent(intents);
});
afterEach(resetPage);

describe('signup intent', () => {
  test('a submit of a form marked data-service-signup-intent is one intent', () => {
    addSignupForm().form.requestSubmit();
    expect(intents).toHaveBeenCalledTimes(1);
  });

  test('a submit of an unmarked form is not an intent', () => {
    addSignupForm(false).form.requestSubmit();
    expect(intents).not.toHaveBeenCalled();
  });

  test('a form added after the loader started counts too', () => {
    const later = document.createElement('div');
    document.body.appendChild(later);
    later.innerHTML = '<form data-service-signup-intent><input name="email"><input type="submit"></form>';
    later.querySelector('form')!.addEventListener('submit', (e) => e.preventDefault());
    later.querySelector('form')!.requestSubmit();
    expect(intents).toHaveBeenCalledTimes(1);
  });

  test('a click on the submit button and the submit it causes are one intent, not two', () => {
    const { form, button } = addSignupForm();
    const submits = vi.fn();
    form.addEventListener('submit', submits);
    button.click();
    expect(submits).toHaveBeenCalledTimes(1);
    expect(intents).toHaveBeenCalledTimes(1);
  });

  test('a click on a plain button whose script calls form.submit() (no submit event) is an intent', () => {
    const { form } = addSignupForm();
    const plain = document.createElement('button');
    plain.type = 'button';
    plain.innerHTML = '<span>Sign up with Google</span>';
    form.appendChild(plain);
    (plain.firstChild as HTMLElement).click();
    expect(intents).toHaveBeenCalledTimes(1);
  });

  test('a click elsewhere in the form, or on a button outside it, is not an intent', () => {
    const { form } = addSignupForm();
    (form.querySelector('input') as HTMLInputElement).click();
    const outside = document.createElement('button');
    document.body.appendChild(outside);
    outside.click();
    expect(intents).not.toHaveBeenCalled();
  });

  test('a second action on the same form after the first has finished is a new intent', async () => {
    const { button } = addSignupForm();
    button.click();
    await new Promise((resolve) => setTimeout(resolve, 0));
    button.click();
    expect(intents).toHaveBeenCalledTimes(2);
  });

  test('one listener per event type, in the capture phase on document', () => {
    const calls = vi.mocked(document.addEventListener).mock.calls;
    expect(calls.map((c) => [c[0], c[2]])).toEqual([
      ['submit', true],
      ['click', true],
    ]);
  });
});
