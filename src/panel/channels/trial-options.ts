import { trialChecksSchema, type CreateTrial } from '../../trials/trials-schemas.js';
import type { FieldErrors } from '../forms.js';
import { parseAcceptWhenText } from './accept-when-form.js';

/** The editor's "Checks and a judge" for "Try on recent events", as typed. */
export interface TrialOptionsForm {
  /** One check a line, written as accept_when's conditions: `reply contains "paged"`. */
  checks: string;
  judgeProvider: string;
  judgeModel: string;
  judgeRubric: string;
}

export const NO_TRIAL_OPTIONS: TrialOptionsForm = {
  checks: '',
  judgeProvider: '',
  judgeModel: '',
  judgeRubric: '',
};

/** The options as posted (each field absent reads as empty). */
export function trialOptionsOf(text: (name: string, fallback: string) => string): TrialOptionsForm {
  return {
    checks: text('trial_checks', ''),
    judgeProvider: text('trial_judge_provider', '').trim(),
    judgeModel: text('trial_judge_model', '').trim(),
    judgeRubric: text('trial_judge_rubric', '').trim(),
  };
}

/**
 * The trial's `checks` and `judge` from the form, or what is wrong beside which field. A judge
 * is asked only when a model is named; it then needs a rubric.
 */
export function parseTrialOptions(
  form: TrialOptionsForm,
): { options: Pick<CreateTrial, 'checks' | 'judge'> } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const checks = parseAcceptWhenText(form.checks, trialChecksSchema);
  if (checks.error) errors.trial_checks = checks.error;
  if (form.judgeRubric && !form.judgeModel)
    errors.trial_judge_model = 'Name the model that judges.';
  if (form.judgeModel && !form.judgeRubric) {
    errors.trial_judge_rubric = 'Say what the judge prefers: the rubric it judges by.';
  }
  if (Object.keys(errors).length) return { errors };
  const options: Pick<CreateTrial, 'checks' | 'judge'> = {};
  if (checks.conditions?.length) options.checks = checks.conditions;
  if (form.judgeModel) {
    options.judge = {
      model: form.judgeModel,
      rubric: form.judgeRubric,
      ...(form.judgeProvider ? { provider: form.judgeProvider } : {}),
    };
  }
  return { options };
}
