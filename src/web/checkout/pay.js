// @ts-check: `npm run typecheck` checks this file (tsconfig.pay.json: DOM, ES2017); comments are stripped when served.
// Sika hosted payment page: calls the payer API (SPEC 4.2), then swaps <main> for the server's fresh
// render of /pay/{id}, so every screen is drawn in one place (src/web/checkout/render.ts). Polls a
// pending attempt with backoff, announces changes in the #live region and moves focus to new screens.
// biome-ignore-all lint/complexity/useOptionalChain: the page targets ES2017 browsers (tsconfig.pay.json), which lack ?.
// biome-ignore-all lint/complexity/useArrowFunction: served as written (ES5 style throughout); arrows would change the bytes served, not the behaviour
// biome-ignore-all lint/correctness/noInnerDeclarations: function-scoped var is meant here (ES5 style), declared where first used
// biome-ignore-all lint/correctness/noUnusedVariables: catch (e) keeps its binding: an optional catch binding is ES2019, past the ES2017 target
// biome-ignore-all lint/suspicious/noRedundantUseStrict: a classic script, not a module: 'use strict' is what makes it strict
(function () {
  'use strict';
  /** @typedef {{code: string, message: string, retry_after_seconds?: number, fields?: {field: string}[]}} ApiError */
  /** @typedef {{error?: ApiError, status?: string, session_status?: string, verification_required?: boolean, surcharges?: Record<string, {total_minor: number, surcharge_minor: number}>, instructions?: {mode?: string, redirect_url?: unknown}}} ApiBody */
  /** @typedef {{operator: string, phone: string}} KeptNumber */
  /** @typedef {{ok: boolean, status: number, data: ApiBody | null, code: string | null, message: string, retryAfter?: number}} Reply */
  var sessionId = document.body.getAttribute('data-session');
  if (!sessionId) return;
  var api = '/api/v1/checkout/sessions/' + encodeURIComponent(sessionId);
  var pagePath = '/pay/' + encodeURIComponent(sessionId);
  /** @type {[number, ...number[]]} */ var DELAYS_S = [1, 2, 3, 5, 8, 13, 21, 30];
  var LATE_AFTER_S = 180;
  var pollTimer = 0;
  var clockTimer = 0;
  var keptKey = 'sika.pay.' + sessionId;
  var pollToken = 0;
  /** @type {HTMLButtonElement | null} */ var lastClicked = null;

  /** The first match (typed by the caller, an HTMLElement by default). @template {Element} [E=HTMLElement] @param {string} selector @param {ParentNode | null} [root] @return {E | null} */
  function $(selector, root) { return (root || document).querySelector(selector); }
  /** @param {number} minor */
  function ghs(minor) { return 'GHS ' + String(Math.floor(minor / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ',') + '.' + String(minor % 100).padStart(2, '0'); }
  /** @param {string | null | undefined} text */
  function announce(text) {
    var live = $('#live');
    if (!live || !text) return;
    live.textContent = '';
    setTimeout(function () { if (live) live.textContent = text; }, 100);
  }
  /** @param {HTMLElement | null} el @param {string} text */
  function showError(el, text) {
    if (el) { el.textContent = text || ''; el.hidden = !text; }
  }
  /** Runs fn on every match. @param {string} selector @param {(el: HTMLElement) => void} fn */
  function each(selector, fn) {
    /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(selector)).forEach(fn);
  }
  /** @param {HTMLButtonElement | null} button @param {boolean} on */
  function busy(button, on) {
    if (!button) return;
    if (on) button.setAttribute('data-label', String(button.textContent));
    button.textContent = on ? 'Please wait…' : button.getAttribute('data-label') || button.textContent;
    button.disabled = on;
    button.setAttribute('aria-busy', String(on));
  }

  /** @param {string} method @param {string} url @param {object} [body] @param {string} [idempotencyKey] @return {Promise<Reply>} */
  async function call(method, url, body, idempotencyKey) {
    /** @type {RequestInit & {headers: Record<string, string>}} */ var init = { method: method, headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' };
    if (idempotencyKey) init.headers['idempotency-key'] = idempotencyKey;
    if (body) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
    var res;
    try {
      res = await fetch(url, init);
    } catch (e) {
      return { ok: false, status: 0, data: null, code: null, message: 'We could not reach the payment service. Check your connection and try again.' };
    }
    /** @type {ApiBody | null} */ var data = null;
    try { data = await res.json(); } catch (e) { /* not JSON */ }
    var error = data && data.error;
    /** @type {Reply} */ var result = { ok: res.ok, status: res.status, data: data, code: error ? error.code : null, message: error ? error.message : 'Something went wrong (' + res.status + '). Please try again.' };
    if (res.status === 429) {
      result.retryAfter = (error && error.retry_after_seconds) || 1;
      result.message = 'Too many tries in a short time. Please wait ' + result.retryAfter + ' seconds and try again.';
    }
    return result;
  }

  /** The Mobile Money number last sent from this tab, so a change of course or a decline keeps it (never in the HTML). @return {KeptNumber | null} */
  function keptNumber() {
    try { return JSON.parse(sessionStorage.getItem(keptKey) || 'null'); } catch (e) { return null; }
  }
  /** @param {KeptNumber | null} kept */
  function keepNumber(kept) {
    try { if (kept) sessionStorage.setItem(keptKey, JSON.stringify(kept)); else sessionStorage.removeItem(keptKey); } catch (e) { /* storage off: the payer types it again */ }
  }

  /** Fetches the page again and swaps <main>; a new screen gets the focus, and its status is announced. @param {string} [message] */
  async function refresh(message) {
    stopPoll();
    var html;
    try {
      var res = await fetch(pagePath + location.search, { cache: 'no-store', headers: { accept: 'text/html' }, credentials: 'same-origin' });
      html = await res.text();
    } catch (e) {
      announce('Connection lost. Trying again…');
      pollTimer = setTimeout(function () { refresh(message); }, 3000);
      return;
    }
    var doc = new DOMParser().parseFromString(html, 'text/html');
    var nextMain = $('main', doc);
    var main = $('main');
    var current = $('#view');
    var next = nextMain && $('#view', nextMain);
    if (!nextMain || !next || !main || !current) return location.reload();
    var changed = next.getAttribute('data-screen') !== current.getAttribute('data-screen') || next.getAttribute('data-attempt') !== current.getAttribute('data-attempt');
    var active = document.activeElement;
    var keep = active && active !== document.body && main.contains(active) ? active.getAttribute('data-action') || active.id : null;
    main.replaceWith(document.adoptNode(nextMain));
    setup();
    announce(message || next.getAttribute('data-announce'));
    var focus = null;
    if (changed) focus = $('#view h2[tabindex]');
    else if (keep) focus = $('#view [data-action="' + keep + '"]') || document.getElementById(keep);
    if (focus && !('disabled' in focus && focus.disabled)) focus.focus();
  }

  function stopPoll() { pollToken++; clearTimeout(pollTimer); clearInterval(clockTimer); }

  /** Seconds since the attempt began: the server's count at render (data-elapsed) plus the time on this page. @param {HTMLElement} view @param {number} loadedAt */
  function elapsedS(view, loadedAt) { return Number(view.getAttribute('data-elapsed') || 0) + (Date.now() - loadedAt) / 1000; }

  /** The time left to approve, and the network's own way to approve once data-after seconds passed. @param {HTMLElement} view */
  function startClock(view) {
    var loadedAt = Date.now();
    var countdown = $('[data-countdown]', view);
    var help = $('[data-help]', view);
    function tick() {
      var elapsed = elapsedS(view, loadedAt);
      if (countdown && !countdown.hasAttribute('data-over')) {
        var left = Math.max(0, Math.ceil(Number(countdown.getAttribute('data-within')) - elapsed));
        var clock = $('[data-clock]', countdown);
        if (clock) clock.textContent = Math.floor(left / 60) + ':' + String(left % 60).padStart(2, '0');
        if (left === 0) {
          countdown.setAttribute('data-over', '');
          var running = $('[data-running]', countdown);
          var ended = $('[data-ended]', countdown);
          if (running) running.hidden = true;
          if (ended) { ended.hidden = false; announce(ended.textContent); }
        }
      }
      if (help && help.hidden && elapsed >= Number(help.getAttribute('data-after'))) { help.hidden = false; announce(help.textContent); }
    }
    if (countdown || help) clockTimer = setInterval(tick, 1000);
  }

  /** Checks a pending attempt after 1, 2, 3, 5 ... seconds (capped per screen) and refreshes when it moves. @param {HTMLElement} view @param {number} [firstDelayS] */
  function startPoll(view, firstDelayS) {
    var token = ++pollToken;
    var step = 1;
    var loadedAt = Date.now();
    var cap = Number(view.getAttribute('data-poll-cap')) || 5;
    var url = api + '/provider-attempts/' + encodeURIComponent(String(view.getAttribute('data-attempt'))) + '?refresh=1';
    async function tick() {
      if (token !== pollToken) return;
      var r = await call('GET', url);
      if (token !== pollToken) return;
      var d = r.data;
      if (r.ok && d && (d.status !== view.getAttribute('data-attempt-status') || d.session_status !== view.getAttribute('data-session-status') || String(d.verification_required) !== view.getAttribute('data-verification'))) return refresh();
      var late = $('[data-late]', view);
      if (late && elapsedS(view, loadedAt) > LATE_AFTER_S) late.hidden = false;
      var delay = Math.min(DELAYS_S[Math.min(step++, DELAYS_S.length - 1)] || cap, cap);
      if (r.retryAfter) delay = Math.max(delay, r.retryAfter);
      pollTimer = setTimeout(tick, delay * 1000);
    }
    pollTimer = setTimeout(tick, (firstDelayS === undefined ? DELAYS_S[0] : firstDelayS) * 1000);
  }

  function setup() {
    stopPoll();
    /** @type {HTMLFormElement | null} */ var form = $('#pay-form');
    if (form) { syncRail(form); refill(form); }
    var view = $('#view');
    if (view && view.getAttribute('data-screen') === 'success') keepNumber(null);
    if (view) startClock(view);
    // Back from a provider's page (data-poll-now): ask for the verified result at once.
    if (view && view.getAttribute('data-attempt') && view.getAttribute('data-poll-cap')) startPoll(view, view.hasAttribute('data-poll-now') ? 0 : undefined);
  }

  // ---- choosing a method ----

  /** Shows the chosen rail's panel and button, and its total as the page's one amount (not inside a closed "Pay another way"). @param {HTMLFormElement} form */
  function syncRail(form) {
    /** @type {HTMLInputElement | null} */ var rail = $('input[name=rail]:checked', form);
    /** @type {NodeListOf<HTMLElement>} */ (form.querySelectorAll('[data-panel]')).forEach(function (panel) {
      panel.hidden = !rail || panel.getAttribute('data-panel') !== rail.value;
    });
    /** @type {HTMLButtonElement | null} */ var button = $('#pay-button', form);
    if (rail && button && !button.disabled) button.textContent = rail.getAttribute('data-action');
    var go = $('[data-go]', form);
    var panel = rail && $('[data-panel="' + rail.value + '"]', form);
    if (go && panel && panel.nextElementSibling !== go) panel.after(go);
    showError($('#form-error', form), '');
    if (!rail || form.closest('details:not([open])')) return;
    var total = ghs(Number(rail.getAttribute('data-total')));
    var fee = Math.max(0, Number(rail.getAttribute('data-total')) - Number(form.getAttribute('data-base'))) || 0;
    var name = rail.parentNode && $('.name', rail.parentNode);
    each('[data-show=amount]', function (el) { el.textContent = total; });
    each('[data-show=fee]', function (el) { el.textContent = ghs(fee); });
    each('[data-show=fee-label]', function (el) { el.textContent = (name ? name.textContent : 'Payment') + ' fee'; });
    each('[data-show=fee-row]', function (el) { el.hidden = !fee; });
    each('li.total[data-optional]', function (el) { el.hidden = !fee; });
    document.title = document.title.replace(/GHS [\d,.]+$/, total);
  }

  /** On the method choice, the number this tab last sent (after a change of course or a decline), its network chosen. @param {HTMLFormElement} form */
  function refill(form) {
    /** @type {HTMLInputElement | null} */ var input = $('#phone', form);
    var kept = keptNumber();
    if (!input || input.value || !kept) return;
    input.value = kept.phone;
    /** @type {HTMLInputElement | null} */ var radio = $('input[name=operator][value="' + kept.operator + '"]', form);
    if (radio) radio.checked = true;
    checkPhone(form, false);
  }

  /** @param {string} value */
  function nationalNumber(value) {
    var compact = value.replace(/[\s\-().]/g, '');
    if (/^\+?233/.test(compact)) return compact.replace(/^\+?233/, '');
    if (compact.charAt(0) === '0') return compact.slice(1);
    return null;
  }

  /** The network of a number from its prefix ('' while too short to tell, 'none' when no network has it). @param {HTMLFormElement} form @param {string | null} national */
  function networkOf(form, national) {
    if (!national || national.length < 2) return '';
    /** @type {Record<string, string[]>} */ var prefixes = JSON.parse(String(form.getAttribute('data-prefixes')));
    for (var network in prefixes) if ((prefixes[network] || []).indexOf(national.slice(0, 2)) >= 0) return network;
    return 'none';
  }

  // Suggests the network from the prefix and says what the number looks like; true when it may be sent. A
  // prefix of another network than the chosen one is a warning with a way on and a way to switch, never a
  // refusal: numbers move between networks (portability), and the chosen network decides.
  /** @param {HTMLFormElement} form @param {boolean} submitting */
  function checkPhone(form, submitting) {
    /** @type {HTMLInputElement | null} */ var input = $('#phone', form);
    var msg = $('#phone-msg', form);
    var ported = $('[data-ported]', form);
    if (!input || !msg) return true;
    /** @type {Record<string, string>} */ var labels = JSON.parse(String(form.getAttribute('data-labels')));
    /** @type {Record<string, string>} */ var names = JSON.parse(String(form.getAttribute('data-networks')));
    /** @type {HTMLInputElement | null} */ var chosen = $('input[name=operator]:checked', form);
    var national = nationalNumber(input.value);
    var detected = networkOf(form, national);
    var text = '';
    var bad = false;
    var warn = false;
    /** @type {HTMLInputElement | null} */ var radio = null;
    /** @type {HTMLInputElement | null} */ var focus = input;
    if (detected && detected !== 'none') {
      // No tile for the network: no provider collects from it for this checkout (Live).
      radio = $('input[name=operator][value="' + detected + '"]', form);
      if (radio && (!chosen || chosen.hasAttribute('data-auto'))) {
        form.querySelectorAll('input[name=operator]').forEach(function (r) { r.removeAttribute('data-auto'); });
        radio.checked = true;
        radio.setAttribute('data-auto', '');
        chosen = radio;
      }
      warn = !chosen || chosen.value !== detected;
      if (chosen && warn) text = 'This number usually belongs to ' + names[detected] + '. Pay with ' + labels[chosen.value] + ' anyway?';
      else if (warn) text = labels[detected] + ' cannot pay this checkout. If this number moved to another network, choose that network; or use another method.';
      else text = labels[detected] + ' number';
    } else if (detected === 'none') {
      bad = true;
      text = 'This number is not on a Mobile Money network (MTN, Telecel or AT). Check the number.';
    }
    if (submitting && !bad) {
      bad = true;
      if (!input.value.trim()) text = 'Enter the Mobile Money number that will pay.';
      else if (!national || !/^\d{9}$/.test(national)) text = 'Enter a Ghana mobile number such as 024 123 4567.';
      else if (!chosen) { text = 'Choose your Mobile Money network.'; focus = $('input[name=operator]', form); }
      else bad = false;
    }
    var offer = warn && !bad && !!chosen && national !== null && /^\d{9}$/.test(national);
    if (msg.textContent !== text) msg.textContent = text;
    msg.className = 'msg' + (text ? (bad ? ' bad' : warn ? ' warn' : ' ok') : '');
    input.setAttribute('aria-invalid', String(bad && focus === input));
    if (ported) {
      /** @type {HTMLButtonElement | null} */ var goOn = $('[data-action=go-on]', ported);
      /** @type {HTMLButtonElement | null} */ var other = $('[data-action=switch-network]', ported);
      ported.hidden = !offer;
      if (offer && chosen && goOn) goOn.textContent = 'Yes, pay with ' + labels[chosen.value];
      if (other) {
        other.hidden = !radio;
        other.textContent = 'Use ' + labels[detected] + ' instead';
        other.setAttribute('data-network', detected);
      }
    }
    if (bad && submitting && focus) focus.focus();
    if (!bad && !submitting && national && /^\d{9}$/.test(national)) payInView(form);
    return !bad;
  }

  /** A whole number typed: the Pay button (under the panel) scrolled into view if it is below the fold, the field staying in view. @param {HTMLFormElement} form */
  function payInView(form) {
    var button = $('#pay-button', form);
    if (!button || form.closest('details:not([open])')) return;
    var box = button.getBoundingClientRect();
    if (box.bottom > window.innerHeight) window.scrollBy(0, box.bottom - window.innerHeight + 8);
  }

  /** After PAYMENT_AMOUNT_MISMATCH: the current totals from the quote endpoint. @param {HTMLFormElement} form */
  async function updateQuote(form) {
    var r = await call('GET', api + '/quote');
    var surcharges = r.data && r.data.surcharges;
    if (!r.ok || !surcharges) return;
    /** @type {NodeListOf<HTMLInputElement>} */ (form.querySelectorAll('input[name=rail]')).forEach(function (radio) {
      var q = surcharges && surcharges[radio.value];
      if (!q) return;
      radio.setAttribute('data-total', String(q.total_minor));
      if (/^Pay /.test(String(radio.getAttribute('data-action')))) radio.setAttribute('data-action', 'Pay ' + ghs(q.total_minor));
      var price = radio.parentNode && $('.price', radio.parentNode);
      var total = price && $('b', price);
      var fee = price && $('small', price);
      if (total) total.textContent = ghs(q.total_minor);
      if (fee) fee.textContent = q.surcharge_minor > 0 ? 'incl. ' + ghs(q.surcharge_minor) + ' fee' : 'no fee';
    });
    syncRail(form);
  }

  /** @param {HTMLFormElement} form */
  async function submitPay(form) {
    var error = $('#form-error', form);
    /** @type {HTMLInputElement | null} */ var rail = $('input[name=rail]:checked', form);
    if (!rail) return showError(error, 'Choose how to pay.');
    var amount = Number(rail.getAttribute('data-total'));
    /** @type {{rail: string, amount_minor: number, operator?: string, phone?: string}} */ var body = { rail: rail.value, amount_minor: amount };
    /** @type {HTMLInputElement | null} */ var phone = $('#phone', form);
    if (rail.value === 'momo') {
      if (!checkPhone(form, true)) return;
      /** @type {HTMLInputElement | null} */ var operator = $('input[name=operator]:checked', form);
      if (operator) body.operator = operator.value;
      if (phone) body.phone = phone.value.trim();
      if (operator && phone) keepNumber({ operator: operator.value, phone: phone.value.trim() });
    }
    /** @type {HTMLButtonElement | null} */ var button = $('#pay-button', form);
    busy(button, true);
    showError(error, '');
    var r = rail.value === 'cash'
      ? await call('POST', '/api/v1/checkout/cash-slips', { session_id: sessionId, amount_minor: amount })
      : await call('POST', api + '/provider-attempts', body);
    var next = r.data && r.data.instructions;
    if (r.ok && next && next.mode === 'card_network_hosted_session' && typeof next.redirect_url === 'string' && /^https?:\/\//i.test(next.redirect_url)) {
      // A Live card: its details go on the provider's page, which sends the payer back to /pay/{id}?attempt=.
      announce('Taking you to the secure card page…');
      return location.assign(next.redirect_url);
    }
    if (r.ok) return refresh();
    busy(button, false);
    if (r.code === 'PAYMENT_AMOUNT_MISMATCH') {
      await updateQuote(form);
      showError(error, 'The total has changed. Check the new amount, then press the button again.');
    } else if (r.code === 'PAYMENT_ATTEMPT_PENDING' || r.code === 'SESSION_NOT_PAYABLE') {
      await refresh(r.message);
    } else if (rail.value === 'momo' && r.data && r.data.error && r.data.error.fields && r.data.error.fields[0] && r.data.error.fields[0].field === 'phone') {
      var msg = $('#phone-msg', form);
      if (msg) { msg.textContent = r.message; msg.className = 'msg bad'; }
      if (phone) { phone.setAttribute('aria-invalid', 'true'); phone.focus(); }
    } else {
      showError(error, r.message);
    }
  }

  // ---- a pending attempt ----

  /** @param {HTMLFormElement} form */
  async function submitCode(form) {
    /** @type {HTMLInputElement | null} */ var input = $('#code', form);
    if (!input) return;
    var error = $('#code-error', form);
    var code = input.value.replace(/\s/g, '');
    if (!/^[0-9A-Za-z]{4,10}$/.test(code)) {
      showError(error, 'Enter the 4 to 10 character code from your phone.');
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    /** @type {HTMLButtonElement | null} */ var button = $('button[type=submit]', form);
    busy(button, true);
    var r = await call('POST', api + '/provider-attempts/' + encodeURIComponent(String(form.getAttribute('data-attempt'))) + '/authorize', { code: code });
    if (r.ok) return refresh('Code accepted. Waiting for confirmation.');
    busy(button, false);
    if (r.status === 409) return refresh(r.message);
    showError(error, r.message);
    input.setAttribute('aria-invalid', 'true');
    input.select();
    input.focus();
  }

  /** @param {HTMLButtonElement} button */
  async function resend(button) {
    var view = $('#view');
    if (!view) return;
    busy(button, true);
    var r = await call('POST', api + '/provider-attempts/' + encodeURIComponent(String(view.getAttribute('data-attempt'))) + '/resend');
    if (r.ok || r.code === 'ATTEMPT_FINAL') return refresh(r.ok ? 'We sent ' + ($('#code-form') ? 'a new code' : 'the prompt again') + '. Check your phone.' : r.message);
    busy(button, false);
    var left = $('[data-resends]', view);
    if (left && (r.code === 'RESEND_LIMIT_REACHED' || r.code === 'RESEND_NOT_AVAILABLE' || r.code === 'PROVIDER_RAIL_UNAVAILABLE')) {
      // Nothing more can be sent (the limit, a provider without a re-send, or gone): say so instead of leaving a button that cannot work.
      button.hidden = true;
      left.textContent = left.getAttribute('data-none');
      announce(left.textContent);
      return;
    }
    showError($('[data-error]', view), r.message);
  }

  /** A random Idempotency-Key: one per form drawn, so pressing again after a lost answer asks the same. @param {HTMLElement} el */
  function keyOf(el) {
    var key = el.getAttribute('data-key');
    if (!key) {
      key = Array.prototype.map.call(crypto.getRandomValues(new Uint8Array(16)), function (/** @type {number} */ b) { return (b + 256).toString(16).slice(1); }).join('');
      el.setAttribute('data-key', key);
    }
    return key;
  }

  // "Use another number or method": cancels the pending attempt (POST .../cancel), then the method choice
  // with the number kept; an attempt that had already been paid shows its success instead.
  /** @param {HTMLFormElement} form */
  async function changeCourse(form) {
    /** @type {HTMLInputElement | null} */ var reference = $('input[name=attempt_reference]', form);
    /** @type {HTMLButtonElement | null} */ var button = $('button[type=submit]', form);
    if (!reference) return;
    busy(button, true);
    showError($('[data-change-error]', form), '');
    var r = await call('POST', api + '/provider-attempts/' + encodeURIComponent(reference.value) + '/cancel', undefined, keyOf(form));
    var d = r.data;
    if (r.ok && d) return refresh(d.status === 'paid' || d.session_status === 'success' ? 'This payment had already gone through.' : d.status === 'cancelled' ? 'Payment stopped. Choose another number or method.' : undefined);
    busy(button, false);
    if (r.code === 'ATTEMPT_FINAL' || r.code === 'SESSION_NOT_PAYABLE') return refresh(r.message);
    showError($('[data-change-error]', form), r.message);
  }

  /** Copies the text of the element a copy button names; without the clipboard, selects it for the payer to copy. @param {HTMLButtonElement} button */
  async function copy(button) {
    var target = document.getElementById(String(button.getAttribute('data-copy')));
    if (!target) return;
    var copied = false;
    try {
      if (navigator.clipboard) { await navigator.clipboard.writeText(String(target.textContent)); copied = true; }
    } catch (e) { /* not allowed here: select it instead */ }
    var selection = window.getSelection();
    if (!copied && selection) {
      selection.selectAllChildren(target);
      try { copied = document.execCommand('copy'); } catch (e) { /* the selection stays for the payer to copy */ }
    }
    var what = String(button.getAttribute('aria-label')).replace(/^Copy the /, '');
    button.textContent = copied ? 'Copied' : 'Selected';
    announce(copied ? 'Copied the ' + what + '.' : 'The ' + what + ' is selected: copy it with your browser.');
    setTimeout(function () { button.textContent = 'Copy'; }, 4000);
  }

  /** @param {HTMLFormElement} form @param {HTMLButtonElement} button */
  async function testOutcome(form, button) {
    var error = $('[data-error]', form.parentNode);
    /** @type {HTMLInputElement | null} */ var reference = $('input[name=attempt_reference]', form);
    if (!reference) return;
    busy(button, true);
    var r = await call('POST', String(form.getAttribute('action')), { attempt_reference: reference.value, outcome: button.value });
    if (r.ok) return refresh();
    busy(button, false);
    showError(error, r.message);
  }

  // ---- events, delegated so that swapped screens need no wiring ----

  document.addEventListener('change', function (e) {
    if (!(e.target instanceof HTMLInputElement)) return;
    var form = e.target.form;
    if (!form || form.id !== 'pay-form') return;
    if (e.target.name === 'rail') syncRail(form);
    if (e.target.name === 'operator') {
      form.querySelectorAll('input[name=operator]').forEach(function (r) { r.removeAttribute('data-auto'); });
      checkPhone(form, false);
    }
  });
  document.addEventListener('input', function (e) {
    if (!(e.target instanceof HTMLInputElement)) return;
    if (e.target.id === 'phone' && e.target.form) checkPhone(e.target.form, false);
    if (e.target.id === 'code') e.target.removeAttribute('aria-invalid');
  });
  document.addEventListener('click', function (e) {
    var button = e.target instanceof Element && e.target.closest ? e.target.closest('button') : null;
    lastClicked = button;
    var action = button && button.getAttribute('data-action');
    if (action === 'print') window.print();
    if (action === 'resend' && button) resend(button);
    if (action === 'copy' && button) copy(button);
    /** @type {HTMLFormElement | null} */ var payForm = button && button.closest('form');
    if (action === 'go-on' && payForm) submitPay(payForm);
    if (action === 'switch-network' && button && payForm) {
      /** @type {HTMLInputElement | null} */ var radio = $('input[name=operator][value="' + button.getAttribute('data-network') + '"]', payForm);
      if (radio) { radio.checked = true; radio.removeAttribute('data-auto'); }
      checkPhone(payForm, false);
      var pay = $('#pay-button', payForm);
      if (pay) pay.focus();
    }
    if (action === 'check') {
      stopPoll();
      var view = $('#view');
      if (view) startPoll(view, 0);
    }
  });
  document.addEventListener('submit', function (e) {
    var form = e.target;
    var button = e.submitter || lastClicked;
    if (!(form instanceof HTMLFormElement)) return;
    if (form.id === 'pay-form') submitPay(form);
    else if (form.id === 'code-form') submitCode(form);
    else if (form.hasAttribute('data-change')) changeCourse(form);
    else if (form.hasAttribute('data-test-outcome') && button instanceof HTMLButtonElement) testOutcome(form, button);
    else return;
    e.preventDefault();
  });
  window.addEventListener('pageshow', function (e) { if (e.persisted) refresh(); });

  setup();
})();
