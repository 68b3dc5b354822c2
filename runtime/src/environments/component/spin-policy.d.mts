/** Whether spinning on the component channel is allowed now (spin-policy.mjs: CPU pressure). */
export function spinAllowed(): boolean;
