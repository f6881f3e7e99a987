// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { render, resetPage, settle, start, submit } from './page';

afterEach(resetPage);

/** Webflow's form block: the form, and its success and failure blocks (hidden by Webflow's stylesheet). */
const renderBlock = () =>
  render(`
    <div class="w-form">
      <form id="email-form" name="email-form" data-name="Email Form" method="get">
        <input class="w-input" type="text" name="Name" data-name="Name" value="Ada Lovelace">
        <input class="w-input" type="email" name="Email" data-name="Email" value="ada@example.com">
        <input type="password" name="Phone" value="123">
        <input type="submit" value="Submit" class="w-button">
      </form>
      <div class="w-form-done" tabindex="-1" role="region"><div>Thank you!</div></div>
      <div class="w-form-fail" tabindex="-1" role="region"><div>Oops!</div></div>
    </div>`);

describe('Webflow forms', () => {
  test('the success block shown after a submit reports once, with the fields and the form id', async () => {
    const { reports } = start('webflow');
    const block = renderBlock();
    submit(block.querySelector('form')!);
    block.querySelector<HTMLElement>('form')!.style.display = 'none';
    block.querySelector<HTMLElement>('.w-form-done')!.style.display = 'block';
    await settle();
    block.querySelector<HTMLElement>('.w-form-done')!.setAttribute('style', 'display: block;');
    await settle();
    expect(reports).toEqual([{ integration: 'webflow', form_id: 'email-form', fields: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' } }]);
  });

  test('the failure block reports nothing', async () => {
    const { reports } = start('webflow');
    const block = renderBlock();
    submit(block.querySelector('form')!);
    block.querySelector<HTMLElement>('.w-form-fail')!.style.display = 'block';
    await settle();
    expect(reports).toEqual([]);
  });

  test('a success block shown without a submit reports nothing', async () => {
    const { reports } = start('webflow');
    renderBlock().querySelector<HTMLElement>('.w-form-done')!.style.display = 'block';
    await settle();
    expect(reports).toEqual([]);
  });
});
