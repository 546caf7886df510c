export const tax = 0.2;

export function* taxRates() {
  yield tax;
}
