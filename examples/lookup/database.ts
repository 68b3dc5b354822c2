// The application's own state: the example assumes `database.get(key)` returning { value } or null.
const rows = new Map<string, { value: string }>([["customer:42", { value: "Ada Lovelace" }], ["customer:7", { value: "Grace Hopper" }]]);

export const database = {
  async get(key: string): Promise<{ value: string } | null> {
    return rows.get(key) ?? null;
  },
};
