import { verifyCommand } from './ops/verify';

/** `npm run verify`: post-deployment validation of one environment (contract 4.2), the verb `npm run ops -- verify`. */
export const VERIFY = verifyCommand('verify');
