/**
 * The demo pages' one script (served as /assets/demo.js): shows what the loader keeps in this browser, and keeps
 * live regions up to date by polling the demo backend for server-rendered fragments (swapped in as the dashboard's
 * are: LIVE_SWAP_SCRIPT). Plain ES2019, no build step.
 */
import { CLICK_COOKIE, CORRELATION_COOKIE } from '../../protocol/cookies';
import { SERVICE_GLOBAL } from '../../protocol/install';
import { LIVE_SWAP_SCRIPT } from '../../server/http/live-swap';

/** The script's source, with the protocol's cookie and global names filled in. */
export function browserScript(): string {
  return SOURCE.replace('%CLICK_COOKIE%', JSON.stringify(CLICK_COOKIE))
    .replace('%CORRELATION_COOKIE%', JSON.stringify(CORRELATION_COOKIE))
    .replace('%SERVICE_GLOBAL%', JSON.stringify(SERVICE_GLOBAL))
    .replace('%LIVE_SWAP%', () => LIVE_SWAP_SCRIPT);
}

const SOURCE = `(function () {
  'use strict';
  var CLICK_COOKIE = %CLICK_COOKIE%;
  var CORRELATION_COOKIE = %CORRELATION_COOKIE%;
  var SERVICE_GLOBAL = %SERVICE_GLOBAL%;
%LIVE_SWAP%

  function cookie(name) {
    var parts = document.cookie ? document.cookie.split('; ') : [];
    for (var i = 0; i < parts.length; i++) {
      var eq = parts[i].indexOf('=');
      if (parts[i].slice(0, eq) === name) return parts[i].slice(eq + 1);
    }
    return null;
  }

  function decode(value) {
    try { return decodeURIComponent(value); } catch (e) { return value; }
  }

  function touchSummary(raw) {
    if (!raw) return null;
    try {
      var touch = JSON.parse(decode(raw));
      var ids = touch.click_ids || {};
      var keys = Object.keys(ids);
      if (!keys.length) return 'a touch without click ids';
      return keys.map(function (k) { return k + ' = ' + ids[k]; }).join(', ') +
        (touch.utm && touch.utm.utm_campaign ? ' (campaign ' + touch.utm.utm_campaign + ')' : '');
    } catch (e) {
      return 'set';
    }
  }

  function loaderState() {
    var api = window[SERVICE_GLOBAL];
    if (api && typeof api.captureSaasSignupIntent === 'function') return 'running';
    return 'not running (still loading, blocked, or the service is down)';
  }

  function renderBrowserState(box) {
    var rows = [
      ['Ad click (' + CLICK_COOKIE + ')', touchSummary(cookie(CLICK_COOKIE)) || 'none yet: arrive through an ad link'],
      ['Signup token (' + CORRELATION_COOKIE + ')', cookie(CORRELATION_COOKIE) || 'none yet: written when you submit the signup form'],
      ['Loader', loaderState()]
    ];
    var dl = document.createElement('dl');
    dl.className = 'kv';
    rows.forEach(function (row) {
      var dt = document.createElement('dt');
      dt.textContent = row[0];
      var dd = document.createElement('dd');
      var code = document.createElement('code');
      code.textContent = row[1];
      dd.appendChild(code);
      dl.appendChild(dt);
      dl.appendChild(dd);
    });
    var old = box.querySelector('dl');
    if (!old || old.textContent !== dl.textContent) {
      if (old) box.replaceChild(dl, old); else box.appendChild(dl);
    }
  }

  function keepLive(region) {
    var src = region.getAttribute('data-live-src');
    var every = Number(region.getAttribute('data-live-every')) || 1000;
    function tick() {
      fetch(src, { headers: { accept: 'text/html' }, cache: 'no-store' })
        .then(function (res) { return res.ok ? res.text() : Promise.reject(new Error('HTTP ' + res.status)); })
        .then(function (markup) {
          // The focus stays on the request body being read; the timeline's summary line is said when it changes.
          if (cnvSwapKeepingFocus(region, markup)) cnvAnnounceSummary(region);
          var finalPart = region.querySelector('[data-final="true"]');
          if (!finalPart) setTimeout(tick, every);
        })
        .catch(function () { setTimeout(tick, every * 3); });
    }
    cnvAnnounceSummary(region);
    var initial = region.querySelector('[data-final="true"]');
    if (!initial) setTimeout(tick, every);
  }

  function start() {
    var boxes = document.querySelectorAll('[data-browser-state]');
    Array.prototype.forEach.call(boxes, function (box) {
      renderBrowserState(box);
      setInterval(function () { renderBrowserState(box); }, 1000);
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-live-src]'), keepLive);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
`;
