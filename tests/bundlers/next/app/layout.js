// No favicon request (the page's only other request would be a 404 in the test's console).
export const metadata = { title: 'attnkit in a Next.js app', icons: 'data:,' };

export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
