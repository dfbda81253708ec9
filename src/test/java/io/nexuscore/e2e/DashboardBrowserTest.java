package io.nexuscore.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.Privileged;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real browser (Debian's headless Chromium driven through chromium-driver) against
 * a real router in user-space mode on free loopback ports, with a bearer token configured: the page
 * loads, its numbers move when requests flow through the data plane, a threshold typed into the
 * editor (after the token prompt) changes the tier of the next request, and the feed shows and
 * filters events. Screenshots go to target/screenshots/.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardBrowserTest {

    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    static final Path SCREENSHOTS = Path.of("target", "screenshots");
    private static final String TOKEN = "dashboard-test-token-7d2e";
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** Bounds on the traffic a test sends while it waits for the page to show it. */
    private static final int MAX_ROUNDS = 60;
    private static final int REQUESTS_PER_ROUND = 4;

    private RouterRuntime router;
    private Path stateDir;
    private Path browserProfile;
    private int controlPort;
    private ChromeDriver browser;
    private WebDriverWait wait;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    void start() throws IOException {
        Privileged.require(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "no " + CHROMIUM + " or " + CHROMEDRIVER + " (Debian packages chromium and chromium-driver; scripts/install-deps.sh installs them)");
        stateDir = RequestSuite.tempDir();
        JsonObject json = RequestSuite.config("127.0.0.1", FreePort.pick(), new JsonObject().put("mode", "user"), stateDir);
        json.getJsonObject("control").put("bearerToken", TOKEN);
        controlPort = json.getJsonObject("control").getInteger("port");
        router = RouterRuntime.start(RouterConfig.fromJson(json));

        browserProfile = Files.createTempDirectory("nexus-dashboard-chromium");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toString());
        // Root in a container has no user namespaces for Chromium's sandbox; the page is our own.
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1150", "--user-data-dir=" + browserProfile, "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions");
        // An explicit driver: Selenium Manager would otherwise try to download one.
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        wait = new WebDriverWait(browser, WAIT);
        Files.createDirectories(SCREENSHOTS);
    }

    @AfterAll
    void stop() {
        try {
            if (browser != null) {
                browser.quit();
            }
        } finally {
            try {
                if (router != null) {
                    router.close();
                }
            } finally {
                RequestSuite.deleteRecursively(stateDir);
                RequestSuite.deleteRecursively(browserProfile);
            }
        }
    }

    @Test
    @Order(1)
    void thePageLoadsAndItsNumbersMoveWhenTrafficFlows() {
        open();
        // The feed (GET /events) and the tenants (GET /tenants) need the token on loopback too.
        browser.executeScript("sessionStorage.setItem('nexuscore.token', arguments[0])", TOKEN);
        open();
        wait.until(d -> text("mode").equals("user"));
        wait.until(d -> number("requests-nano") >= 0);
        long before = number("requests-nano");
        wait.until(d -> text("stream-state").equals("live")); // the event stream is connected

        // Traffic until the page shows it: a bounded number of rounds, no timing assumption.
        int sent = 0;
        double seenRate = 0;
        for (int round = 0; round < MAX_ROUNDS && !(seenRate > 0 && number("requests-nano") > before); round++) {
            for (int i = 0; i < REQUESTS_PER_ROUND; i++) {
                assertEquals("nano", post(RequestSuite.NANO).headers().firstValue("X-NX-Assigned-Tier").orElse(""));
                sent++;
            }
            pause(300);
            seenRate = rate("rate-nano"); // read once: the page may show 0 again once the traffic stops
        }
        int total = sent;
        assertTrue(seenRate > 0, "req/s for nano rose above zero while requests flowed: " + text("rate-nano"));
        wait.until(d -> number("requests-nano") >= before + total);
        wait.until(d -> text("p50-nano").matches("[0-9.]+") && text("p99-nano").matches("[0-9.]+"));
        // Both cells in one script run: the page cannot repaint between the two reads.
        String percentiles = (String) browser.executeScript("return document.getElementById('p50-nano').textContent"
                + " + ' ' + document.getElementById('p99-nano').textContent");
        String[] p50p99 = percentiles.split(" ");
        assertTrue(Double.parseDouble(p50p99[1]) >= Double.parseDouble(p50p99[0]), "P50 P99: " + percentiles);
        assertTrue(text("queue-nano").endsWith("/ 32"), "queue depth over capacity: " + text("queue-nano"));
        assertEquals(0, number("requests-large"), "no large request was sent");
        WebElement nanoLine = browser.findElement(By.cssSelector("#chart-rate polyline.t-nano"));
        assertFalse(nanoLine.getDomAttribute("points").isBlank(), "the rate chart draws the nano series");
        screenshot("dashboard-traffic.png");
    }

    @Test
    @Order(2)
    void aThresholdTypedIntoTheEditorChangesTheNextRequestsTier() {
        browser.executeScript("sessionStorage.clear()");
        open();
        // No token yet: the feed's GET /events answers 401 and the page asks for one. A wrong one is asked again.
        WebElement dialog = browser.findElement(By.id("token-dialog"));
        wait.until(d -> dialog.isDisplayed());
        browser.findElement(By.id("token-input")).sendKeys("not-the-token");
        browser.findElement(By.id("token-submit")).click();
        wait.until(d -> dialog.isDisplayed() && text("token-reason").contains("refused"));
        screenshot("dashboard-token-prompt.png");
        browser.findElement(By.id("token-input")).sendKeys(TOKEN);
        browser.findElement(By.id("token-submit")).click();
        wait.until(d -> !dialog.isDisplayed());

        wait.until(d -> text("nano-max").equals("60") && text("small-max").equals("130"));
        assertEquals("small", assignedTier(post(RequestSuite.SMALL)), "score 76 is small under 60/130");

        WebElement nano = browser.findElement(By.id("nano-max-input"));
        nano.clear();
        nano.sendKeys("100");
        // The page's refreshes never write over a field the operator is editing (it once did: "60100").
        assertEquals("100", nano.getAttribute("value"));
        browser.findElement(By.id("thresholds-apply")).click();
        wait.until(d -> !text("thresholds-result").isEmpty() && !text("thresholds-result").startsWith("applying"));
        assertTrue(text("thresholds-result").startsWith("applied"), "the PATCH: " + text("thresholds-result"));

        wait.until(d -> text("nano-max").equals("100"));
        wait.until(d -> text("threshold-source").startsWith("API"));
        assertTrue(text("threshold-change").startsWith("60 / 130 → 100 / 130"), text("threshold-change"));
        assertTrue(text("thresholds-result").startsWith("applied: 100 / 130"), text("thresholds-result"));
        assertEquals(TOKEN, browser.executeScript("return sessionStorage.getItem('nexuscore.token')"),
                "the token is kept in the tab's sessionStorage");

        HttpResponse<String> next = post(RequestSuite.SMALL);
        assertEquals(200, next.statusCode(), next.body());
        assertEquals("nano", assignedTier(next), "the same request is nano once nano_max is 100");
        screenshot("dashboard-threshold.png");
    }

    @Test
    @Order(3)
    void theFeedShowsEventsAndFiltersThemByType() {
        open(); // history replay (Last-Event-ID 0) brings the earlier requests and the threshold change
        assertEquals(200, post(RequestSuite.LARGE).statusCode());
        wait.until(d -> !feed("li.ev-request").isEmpty() && !feed("li.ev-threshold").isEmpty());
        wait.until(d -> feed("li.ev-request").stream().anyMatch(li -> li.getText().contains("→ large")));
        wait.until(d -> number("requests-large") >= 1);
        // A little mixed traffic so the charts have a history: bounded rounds, until eight rate samples.
        for (int round = 0; round < 2 * MAX_ROUNDS && plotted("#chart-rate polyline.t-nano") < 8; round++) {
            for (RequestSuite.Case c : List.of(RequestSuite.NANO, RequestSuite.NANO, RequestSuite.SMALL, RequestSuite.LARGE)) {
                assertEquals(200, post(c).statusCode());
            }
            pause(300);
        }
        assertTrue(plotted("#chart-rate polyline.t-nano") >= 8, "the rate chart keeps a history");
        // One real misroute: 150 one-letter words (estimate 98: nano under nano_max 100)
        // but 150 cl100k tokens, which the guest judges large.
        HttpResponse<String> misrouted = post("/v1/tasks/echo", new JsonObject()
                .put("prompt", String.join(" ", Collections.nCopies(150, "a"))).encode());
        assertEquals("nano", assignedTier(misrouted), misrouted.body());
        assertTrue(misrouted.headers().firstValue("X-NX-Misroute").orElse("").contains("strict"),
                "X-NX-Misroute: " + misrouted.headers().firstValue("X-NX-Misroute"));
        // The router judges each answer (X-NX-Misroute) and /tiers sums that up: the page shows a rate
        // above zero exactly for the tiers and kinds some answer was judged wrong in.
        for (String tier : List.of("nano", "small", "large")) {
            for (String kind : List.of("strict", "banded", "gross")) {
                String cell = text("misroute-" + kind + "-" + tier);
                assertTrue(cell.matches("\\d+\\.\\d %"), kind + " misroute of " + tier + ": " + cell);
                boolean seen = misroutes.contains(tier + "/" + kind);
                wait.until(d -> seen == !text("misroute-" + kind + "-" + tier).equals("0.0 %"));
            }
        }
        screenshot("dashboard.png");

        browser.findElement(By.cssSelector("#feed-filter input[value=request]")).click();
        wait.until(d -> feed("li.ev-request").stream().noneMatch(WebElement::isDisplayed));
        assertTrue(feed("li.ev-threshold").stream().allMatch(WebElement::isDisplayed), "threshold events stay");

        browser.findElement(By.id("feed-text")).sendKeys("100 / 130");
        wait.until(d -> feed("li.ev-threshold").stream().filter(WebElement::isDisplayed).count() == 1);
        assertTrue(text("feed-count").startsWith("1 of "), text("feed-count"));
    }

    // --- helpers ----------------------------------------------------------------------------------

    private void open() {
        browser.get("http://127.0.0.1:" + controlPort + "/");
    }

    private String text(String id) {
        return browser.findElement(By.id(id)).getText().strip();
    }

    /** A cell holding a count; -1 while it shows none. */
    private long number(String id) {
        String t = text(id);
        return t.matches("\\d+") ? Long.parseLong(t) : -1;
    }

    private double rate(String id) {
        String t = text(id);
        return t.matches("\\d+(\\.\\d+)?") ? Double.parseDouble(t) : 0;
    }

    /** Points a chart line draws. */
    private int plotted(String selector) {
        String points = browser.findElement(By.cssSelector(selector)).getDomAttribute("points");
        return points == null || points.isBlank() ? 0 : points.strip().split("\\s+").length;
    }

    private List<WebElement> feed(String selector) {
        return browser.findElements(By.cssSelector("#feed " + selector));
    }

    /** Every request this test sent that the router judged a misroute: "assigned/kind". */
    private final Set<String> misroutes = new HashSet<>();

    private HttpResponse<String> post(RequestSuite.Case c) {
        return post(c.path(), c.body());
    }

    private HttpResponse<String> post(String path, String body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + router.dataPlanePort() + path))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            String judged = response.headers().firstValue("X-NX-Misroute").orElse("none");
            for (String kind : judged.split(",")) {
                if (!kind.equals("none")) {
                    misroutes.add(assignedTier(response) + "/" + kind);
                }
            }
            return response;
        } catch (IOException e) {
            throw new UncheckedIOException("POST " + path, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during POST " + path, e);
        }
    }

    private static String assignedTier(HttpResponse<String> response) {
        return response.headers().firstValue("X-NX-Assigned-Tier").orElse("(none)");
    }

    private void screenshot(String name) {
        File shot = browser.getScreenshotAs(OutputType.FILE);
        try {
            Files.copy(shot.toPath(), SCREENSHOTS.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("saving screenshot " + name, e);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
