import { z } from 'zod';

/**
 * An e-mail address as browsers' e-mail fields take it: a domain without a dot, such as
 * `admin@localhost`, is one (the address the first admin gets, and one a newcomer types).
 */
export const emailAddress = (message?: string) =>
  z.email({ pattern: z.regexes.html5Email, ...(message ? { error: message } : {}) });
