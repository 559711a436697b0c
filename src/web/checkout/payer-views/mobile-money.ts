// Mobile Money on the payer page: the network and wallet fields, the verification-code screen (Telecel
// Cash), the prompt screen with its resend button, and the wallet named on the success screen.
import { VERIFICATION_CODE_LENGTH_MAX, VERIFICATION_CODE_LENGTH_MIN } from '../../../checkout/attempts.ts';
import { formatGhs, NETWORK_LABELS, type MomoNetwork } from '../../../lib/ghana.ts';
import { html, raw, type Html } from '../../html.ts';
import type { PageModel, RailPayerView } from '../page-model.ts';
import { icon, late, networkLabel, testPanel } from '../page-parts.ts';

/** The wallet number field, in characters (spaces and a +233 prefix allowed; the script checks the number). */
const PHONE_INPUT_LENGTH_MAX = 20;

function resendButton(m: PageModel): Html {
  const left = m.resendsLeft;
  return html`<button type="button" class="secondary block" data-action="resend"${raw(left > 0 ? '' : ' disabled')}>Resend prompt</button>
<p class="hint" data-resends>${left > 0 ? `You can resend it ${left} more time${left === 1 ? '' : 's'}.` : 'The prompt cannot be re-sent again. If it does not arrive, wait for this payment to end and start a new one.'}</p>`;
}

export function codeScreen(m: PageModel): Html {
  const a = m.attempt!;
  const i = m.instructions ?? {};
  return html`<div class="card screen">
<h2 tabindex="-1">Enter your ${networkLabel(a.network)} code</h2>
<p>${networkLabel(a.network)} needs a verification code to approve <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> from the wallet ending <strong>${i.phone_last4 ?? ''}</strong>. Create the code in the ${networkLabel(a.network)} menu on your phone, then enter it here.</p>
<form id="code-form" novalidate data-attempt="${a.id}">
<label class="field" for="code">Verification code</label>
<input id="code" name="code" type="text" autocomplete="one-time-code" spellcheck="false" autocapitalize="off" maxlength="${VERIFICATION_CODE_LENGTH_MAX}" aria-describedby="code-hint code-error">
<p id="code-hint" class="hint">${m.test ? 'Test mode: the code is 123456.' : `The code is ${VERIFICATION_CODE_LENGTH_MIN} to ${VERIFICATION_CODE_LENGTH_MAX} letters or digits.`}</p>
<p id="code-error" class="error" role="alert" hidden></p>
<div class="actions"><button type="submit" class="block">Confirm code</button></div>
</form>
${testPanel(m)}</div>`;
}

export const mobileMoneyView = {
  panel: () => html`
<fieldset><legend>Mobile Money network</legend><div class="nets">
${(Object.keys(NETWORK_LABELS) as MomoNetwork[]).map((n) => html`<label class="opt"><input type="radio" name="operator" value="${n}">${NETWORK_LABELS[n]}</label>`)}
</div></fieldset>
<label class="field" for="phone">Mobile Money number</label>
<input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel-national" maxlength="${PHONE_INPUT_LENGTH_MAX}" placeholder="024 123 4567" aria-describedby="phone-hint phone-msg">
<p id="phone-hint" class="hint">The wallet that pays. We'll send a payment prompt to this phone.</p>
<p id="phone-msg" class="msg" aria-live="polite"></p>
`,

  waiting(m) {
    const a = m.attempt!;
    const i = m.instructions ?? {};
    if (a.network === 'telecel') {
      return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Confirming your Telecel Cash payment</h2>
<p>Your code was accepted. We are waiting for Telecel Cash to confirm <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> from the wallet ending <strong>${i.phone_last4 ?? ''}</strong>. If your phone asks you to approve it, enter your PIN.</p>
<p class="hint">This page updates by itself.</p>
${late}${testPanel(m)}</div>`;
    }
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Approve the payment on your phone</h2>
<p>We sent a request for <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> to the ${networkLabel(a.network)} wallet ending <strong>${i.phone_last4 ?? ''}</strong>. Enter your Mobile Money PIN on your phone to approve it.</p>
<p class="hint">This page updates by itself. No prompt after a minute? Resend it.</p>
<div class="actions">${resendButton(m)}</div>
<p class="error" data-error role="alert" hidden></p>
${late}${testPanel(m)}</div>`;
  },

  paidWith: (a, i) => `${networkLabel(a.network)}${i.phone_last4 ? ` ending ${i.phone_last4}` : ''}`,
} satisfies RailPayerView;
