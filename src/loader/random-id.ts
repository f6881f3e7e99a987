/** Random ids the loader mints: correlation tokens and form submission ids. */

/** A new id: 16 bytes from crypto.getRandomValues as 22 base64url characters (the 24 of base64 less its padding). */
export const randomId = (): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).slice(0, 22).replace(/\+/g, '-').replace(/\//g, '_');
};
