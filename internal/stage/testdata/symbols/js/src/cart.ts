// export function NotAFunction() {}
/* class NotAClass {} */
import { tax } from "./tax.js";

export const MAX_ITEMS = 50;
const pattern = /["'`{]/g;

export interface CartLine {
  name: string;
  qty: number;
}

export type CartId = string;

export enum Status { Open, Closed }

export default class Cart {
  private lines: CartLine[] = [];

  static fromJSON(json: string): Cart {
    return new Cart();
  }

  addItem(name: string): void {
    const label = `item ${name} in {`;
    this.lines.push({ name, qty: 1 });
  }

  get size(): number {
    return this.lines.length;
  }

  totalPrice = (): number => this.lines.length * tax;
}

export async function loadCart(id: CartId): Promise<Cart> {
  function helperInner() { return 1; }
  return new Cart();
}
