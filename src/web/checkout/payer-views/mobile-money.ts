// Mobile Money on the payer page: the network and wallet fields, the verification-code screen (Telecel
// Cash, or any network whose provider asks for an OTP or voucher), the prompt screen, the resend button
// both share, and the wallet named on the success screen.
import { VERIFICATION_CODE_LENGTH_MAX, VERIFICATION_CODE_LENGTH_MIN } from '../../../checkout/attempts.ts';
import { formatGhs, MOMO_NETWORKS, NETWORK_LABELS } from '../../../lib/ghana.ts';
import { html, raw, when, type Html } from '../../html.ts';
import type { PageModel, RailPayerView } from '../page-model.ts';
import { changeCourse, icon, late, networkLabel, testPanel, waitTiming } from '../page-parts.ts';

/** The wallet number field, in characters (spaces and a +233 prefix allowed; the script checks the number). */
const PHONE_INPUT_LENGTH_MAX = 20;

/**
 * Resend, only where the attempt's provider can prompt again without a second charge (resend_supported:
 * the Test simulator; Paystack and MTN MoMo cannot), with how many are left. None left is said in words,
 * never shown as a dead button; data-none is what the script shows instead when the API says no more can
 * be sent (409 RESEND_LIMIT_REACHED or RESEND_NOT_AVAILABLE; 503 PROVIDER_RAIL_UNAVAILABLE: the attempt's
 * provider is no longer served).
 */
function resendButton(m: PageModel, what: 'prompt' | 'code'): Html {
  const f = m.facts;
  if (!f?.resendSupported) return raw('');
  const left = f.resendsLeft;
  const none =
    what === 'code'
      ? 'A new code cannot be sent for this payment. Follow the steps above to get your code, or use another number or method.'
      : 'The prompt cannot be re-sent for this payment. If it does not arrive, use another number or method.';
  return html`<div class="actions">${when(left > 0, () => html`<button type="button" class="secondary block" data-action="resend">Resend ${what}</button>`)}
<p class="hint" data-resends data-none="${none}">${left > 0 ? `No ${what}? You can resend it ${left} more time${left === 1 ? '' : 's'}.` : none}</p></div>
<p class="error" data-error role="alert" hidden></p>`;
}

/** The provider's own words for the payer (e.g. "Dial *110# to generate a voucher"): shown as plain text. */
function providerPrompt(i: Record<string, unknown>): Html {
  const text = typeof i.display_text === 'string' ? i.display_text.trim() : '';
  return when(text, () => html`<p class="prompt" data-provider-text>${text}</p>`);
}

/** The code step: its instructions say mode 'verification_code' (an OTP, or a voucher the payer generates). */
export function codeScreen(m: PageModel): Html {
  const a = m.attempt!;
  const i = m.instructions ?? {};
  const network = networkLabel(a.network);
  const prompt = providerPrompt(i);
  return html`<div class="card screen">
<h2 tabindex="-1">Enter your ${network} code</h2>
<p>${network} needs a verification code to approve <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> from the wallet ending <strong>${i.phone_last4 ?? ''}</strong>. ${prompt.value ? `${network} says:` : `Create the code in the ${network} menu on your phone, then enter it here.`}</p>
${prompt}
<form id="code-form" novalidate data-attempt="${a.id}">
<label class="field" for="code">Verification code</label>
<input id="code" name="code" type="text" autocomplete="one-time-code" spellcheck="false" autocapitalize="off" maxlength="${VERIFICATION_CODE_LENGTH_MAX}" aria-describedby="code-hint code-error">
<p id="code-hint" class="hint">${m.test ? 'Test mode: the code is 123456.' : `The code is ${VERIFICATION_CODE_LENGTH_MIN} to ${VERIFICATION_CODE_LENGTH_MAX} letters or digits.`}</p>
<p id="code-error" class="error" role="alert" hidden></p>
<div class="actions"><button type="submit" class="block">Confirm code</button></div>
</form>
${waitTiming(m)}
${resendButton(m, 'code')}
${changeCourse(m)}
${testPanel(m)}</div>`;
}

export const mobileMoneyView = {
  // Only the networks a provider collects from for this session (all of them in Test).
  panel: (m) => html`
<fieldset><legend>Mobile Money network</legend><div class="nets">
${MOMO_NETWORKS.filter((n) => !m.session.allowed_operators || m.session.allowed_operators.includes(n)).map((n) => html`<label class="opt"><input type="radio" name="operator" value="${n}"><span>${NETWORK_LABELS[n]}</span></label>`)}
</div></fieldset>
<label class="field" for="phone">Mobile Money number</label>
<input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel-national" maxlength="${PHONE_INPUT_LENGTH_MAX}" placeholder="024 123 4567" aria-describedby="phone-hint phone-msg">
<p id="phone-hint" class="hint">The wallet that pays. We'll send a payment prompt to this phone.</p>
<p id="phone-msg" class="msg" aria-live="polite"></p>
<p class="choice" data-ported hidden><button type="button" class="secondary" data-action="go-on"></button><button type="button" class="secondary" data-action="switch-network"></button></p>
`,

  waiting(m) {
    const a = m.attempt!;
    const i = m.instructions ?? {};
    if (a.network === 'telecel') {
      return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Confirming your Telecel Cash payment</h2>
<p>Your code was accepted. We are waiting for Telecel Cash to confirm <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> from the wallet ending <strong>${i.phone_last4 ?? ''}</strong>. If your phone asks you to approve it, enter your PIN.</p>
<p class="hint">This page updates by itself.</p>
${waitTiming(m)}
${changeCourse(m)}
${late}${testPanel(m)}</div>`;
    }
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Approve the payment on your phone</h2>
<p>We sent a request for <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> to the ${networkLabel(a.network)} wallet ending <strong>${i.phone_last4 ?? ''}</strong>. Enter your Mobile Money PIN on your phone to approve it.</p>
${providerPrompt(i)}
<p class="hint">This page updates by itself.</p>
${waitTiming(m)}
${resendButton(m, 'prompt')}
${changeCourse(m)}
${late}${testPanel(m)}</div>`;
  },

  paidWith: (a, i) => `${networkLabel(a.network)}${i.phone_last4 ? ` ending ${i.phone_last4}` : ''}`,
} satisfies RailPayerView;
