import { describe, expect, it } from 'vitest';
import { parseLogSearch } from '../../src/panel/logs/log-search.js';

describe('the Brain Logs search box', () => {
  it('reads path = value as a payload condition', () => {
    expect(parseLogSearch('order.status = paid')).toEqual({
      payload: [{ path: 'order.status', value: 'paid' }],
      q: '',
    });
    expect(parseLogSearch('order.status=paid')).toEqual(parseLogSearch('order.status = paid'));
  });

  it('reads everything else as free text', () => {
    expect(parseLogSearch('  timeout   error ')).toEqual({ payload: [], q: 'timeout error' });
  });

  it('reads both, quoted values and several conditions', () => {
    expect(parseLogSearch('refund order.status = paid customer.name="Ada \\"A\\" L" late')).toEqual(
      {
        payload: [
          { path: 'order.status', value: 'paid' },
          { path: 'customer.name', value: 'Ada "A" L' },
        ],
        q: 'refund late',
      },
    );
  });

  it('takes an empty value (absent or null fields)', () => {
    expect(parseLogSearch('customer.email =')).toEqual({
      payload: [{ path: 'customer.email', value: '' }],
      q: '',
    });
  });
});
