// The payer's page of a payment link (/l/{slug}, issue 35): the merchant, the link, the amount (fixed, or a
// field in cedis), the payer's name and the link's custom fields, and one Pay button. A plain form that
// works without JavaScript; it looks like the payer page (its stylesheet and classes, styles.ts) and, like
// it, stays far under the first load's budget. A refused form comes back with what was typed and a message
// beside each field that failed.
import type { LinkForm, LinkFormErrors } from '../../checkout/payment-link-checkout.ts';
import { fieldErrorKey } from '../../checkout/payment-link-checkout.ts';
import { CUSTOMER_NAME_LENGTH_MAX } from '../../checkout/model.ts';
import {
  CUSTOM_FIELD_VALUE_LENGTH_MAX,
  type CustomField,
  type CustomFieldType,
  type PaymentLinkRow,
} from '../../checkout/payment-link-model.ts';
import { formatGhs } from '../../lib/ghana.ts';
import { html, raw, when, type Html } from '../html.ts';
import { ICONS } from './page-parts.ts';
import { CHECKOUT_CSS } from './styles.ts';

/** What the payer page's stylesheet lacks for this form: e-mail inputs, and the "(optional)" beside a label. */
export const LINK_CSS = `${CHECKOUT_CSS}
input[type=email]{font:inherit;font-size:1.1rem;width:100%;padding:.7rem .75rem;border:1px solid #6b7380;border-radius:9px;background:#fff;color:var(--ink)}
.opt-mark{font-weight:400;color:var(--muted)}.row{margin:0 0 1rem}`;

export interface LinkPageView {
  link: Pick<
    PaymentLinkRow,
    'slug' | 'name' | 'description' | 'amount_minor' | 'amount_min_minor' | 'amount_max_minor'
  > & {
    custom_fields: CustomField[];
  };
  merchantName: string;
  test: boolean;
  /** What the payer typed (a refused form), or null for a fresh page. */
  form: LinkForm | null;
  errors: LinkFormErrors;
}

/** A custom field's input: the phone keypad for a phone, the decimal keypad for a number. */
const INPUT_OF: Record<CustomFieldType, { type: string; inputmode?: string; autocomplete?: string }> = {
  text: { type: 'text' },
  number: { type: 'text', inputmode: 'decimal' },
  phone: { type: 'tel', inputmode: 'tel', autocomplete: 'tel' },
  email: { type: 'email', inputmode: 'email', autocomplete: 'email' },
};

interface InputSpec {
  id: string;
  name: string;
  label: string;
  required: boolean;
  value: string;
  error: string | undefined;
  hint?: string;
  type: string;
  inputmode?: string;
  autocomplete?: string;
  maxlength: number;
}

/** One labelled input with its hint and, when refused, the message beside it (tied by aria-describedby). */
function input(spec: InputSpec): Html {
  const hintId = `${spec.id}-hint`;
  const errorId = `${spec.id}-error`;
  const described = [spec.hint ? hintId : null, spec.error ? errorId : null].filter(Boolean).join(' ');
  const attrs = [
    spec.inputmode ? html` inputmode="${spec.inputmode}"` : raw(''),
    spec.autocomplete ? html` autocomplete="${spec.autocomplete}"` : raw(''),
    spec.required ? raw(' required') : raw(''),
    spec.error ? raw(' aria-invalid="true"') : raw(''),
    described ? html` aria-describedby="${described}"` : raw(''),
  ]
    .map((part) => part.value)
    .join('');
  return html`<div class="row"><label class="field" for="${spec.id}">${spec.label}${when(!spec.required, () => html` <span class="opt-mark">(optional)</span>`)}</label>
<input type="${spec.type}" id="${spec.id}" name="${spec.name}" value="${spec.value}" maxlength="${spec.maxlength}"${raw(attrs)}>
${when(spec.hint, () => html`<p class="hint" id="${hintId}">${spec.hint}</p>`)}${when(spec.error, () => html`<p class="msg bad" id="${errorId}">${spec.error}</p>`)}</div>`;
}

function formOf(view: LinkPageView): Html {
  const { link, form, errors } = view;
  const open = link.amount_minor === null;
  const rows: Html[] = [];
  if (open)
    rows.push(
      input({
        id: 'amount',
        name: 'amount',
        label: 'Amount (GHS)',
        required: true,
        value: form?.amount ?? '',
        error: errors.amount,
        hint: `Between ${formatGhs(link.amount_min_minor)} and ${formatGhs(link.amount_max_minor)}`,
        type: 'text',
        inputmode: 'decimal',
        maxlength: 20,
      }),
    );
  rows.push(
    input({
      id: 'customer_name',
      name: 'customer_name',
      label: 'Your name',
      required: false,
      value: form?.customerName ?? '',
      error: errors.customer_name,
      type: 'text',
      autocomplete: 'name',
      maxlength: CUSTOMER_NAME_LENGTH_MAX,
    }),
  );
  for (const field of link.custom_fields)
    rows.push(
      input({
        id: `f-${field.key}`,
        name: `fields[${field.key}]`,
        label: field.label,
        required: field.required,
        value: form?.fields[field.key] ?? '',
        error: errors[fieldErrorKey(field.key)],
        hint: field.type === 'phone' ? 'A Ghana mobile number, such as 024 123 4567' : undefined,
        ...INPUT_OF[field.type],
        maxlength: CUSTOM_FIELD_VALUE_LENGTH_MAX,
      }),
    );
  const refused = Object.keys(errors).length > 0;
  return html`<form class="card" method="post" action="/l/${link.slug}">
${when(refused, () => html`<p class="error" role="alert">Please correct the fields marked below. Nothing was charged.</p>`)}
${raw(rows.map((row) => row.value).join('\n'))}
<button type="submit" class="block">${open ? 'Continue to payment' : `Pay ${formatGhs(link.amount_minor!)}`}</button>
<p class="hint">Next you choose Mobile Money, card or another way to pay.</p>
</form>`;
}

/** The document around a link page: the payer page's head, Test bar and footer, and no script. */
function documentOf(title: string, test: boolean, main: Html): string {
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${title}</title><link rel="icon" href="data:,"><style>${raw(LINK_CSS)}</style></head>
<body>
${when(test, () => html`<div class="testbar" role="note">Test mode — no real money moves</div>`)}
${main}
<footer><p>${raw(ICONS.lock)} Secure payment by Sika. Never share your Mobile Money PIN with anyone, including us.</p></footer>
</body></html>`}`;
}

export function renderLinkPage(view: LinkPageView): string {
  const { link } = view;
  const amount =
    link.amount_minor === null
      ? html`<p class="amount big">Amount of your choice</p>`
      : html`<p class="amount num">${formatGhs(link.amount_minor)}</p>`;
  return documentOf(
    `${link.name} · ${view.merchantName}`,
    view.test,
    html`<main class="wrap"><section class="summary" aria-labelledby="pay-title">
<h1 id="pay-title"><span class="payee">Payment to</span><br>${view.merchantName}</h1>
<p class="desc"><strong>${link.name}</strong></p>
${amount}
${when(link.description, () => html`<p class="desc">${link.description}</p>`)}
</section><div class="pay">${formOf(view)}</div></main>`,
  );
}
