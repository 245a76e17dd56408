/** Stylesheets are bundled by Bun into a content-hashed asset; importing one has no value. */
declare module "*.css";
