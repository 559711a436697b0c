// The merchant's account over the API (issue 33): GET /api/v1/account and the account.updated event's data.
import { Type } from '@sinclair/typebox';
import { ACTIVATION_STATUSES } from '../../../accounts/activation-model.ts';
import { DateTime, StringEnum } from '../../../lib/typebox.ts';

export const Account = Type.Object(
  {
    object: Type.Literal('account'),
    id: Type.String({ description: "The merchant's id." }),
    business_name: Type.String(),
    activation: Type.Object({
      status: StringEnum(ACTIVATION_STATUSES, {
        description:
          'The Go-Live application: not_submitted (being filled in), under_review, changes_requested, approved (Live open) or rejected.',
      }),
      requirements: Type.Array(Type.String(), {
        description:
          'What is still missing before the account can be approved, e.g. activation_application; empty once approved or under review.',
      }),
    }),
    suspended: Type.Boolean({ description: 'Suspended by Sika: new Live work is refused (Test keeps working).' }),
    live_enabled: Type.Boolean({ description: 'Live calls are accepted: approved and not suspended.' }),
    created_at: DateTime,
  },
  { $id: 'Account', title: 'Account' },
);
