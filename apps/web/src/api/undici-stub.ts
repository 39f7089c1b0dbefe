// Stands in for undici in the browser bundle: @pipewright/client makes an undici Agent only
// when given a CA to trust, which the dashboard never does (the browser trusts its own).
export class Agent {
  constructor() {
    throw new Error('undici is not available in the browser');
  }
}
